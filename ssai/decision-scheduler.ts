// When a session's ad decisions are made (issue 19 point 4): a break announced ahead (a cue or DATERANGE whose start
// lies past the window's end) is decided in the background at a random moment of its lead time, so 10,000 viewers'
// decisions are spread over seconds instead of landing in one reload; a break already in the window is decided
// while the playlist waits, for a bounded time: past the deadline the session gets the slate (or the content) and the
// playlist goes out on time.
import type { AdPlanner, AvailRecord, SessionRecord } from './ad-planner.js';
import type { ContentShape } from './content-shape.js';
import type { Avail } from './cue-finder.js';
import type { SsaiMetrics } from './metrics.js';

export interface DecisionSchedulerDeps {
  planner: Pick<AdPlanner, 'recordFor' | 'lateRecord'>;
  metrics: Pick<SsaiMetrics, 'decisionsEarly' | 'decisionsLate'>;
  now: () => number;
  /** how long a playlist waits for the decision of a break in its window (default: unbounded) */
  deadlineMs?: number;
  random?: () => number;
  /**
   * Early decisions back off while the event loop lags (default true): false keeps the bound at its maximum. The
   * playlists are the urgent work; an early decision has seconds of slack before its break enters the window.
   */
  adaptive?: boolean;
  /** decisions of breaks in the window running at once, at most (default 256) */
  maxInWindow?: number;
  /** an early decision was made: one callback for all (a closure per viewer would cost ~120 B while it waits) */
  onEarly?: (task: DecisionTask, record: AvailRecord) => void;
}

export type DecisionTask = { session: SessionRecord; adServer: string; avail: Avail; targetDuration: number; shape?: ContentShape };

/**
 * An early decision waiting for its moment, or running. Its times are whole ms since the scheduler started: small
 * integers the object holds inline, where epoch times would be a 16-byte heap number each (10,000 wait at once).
 */
type Early = { task: DecisionTask; dueAt: number; latest: number };

/** Early decisions running at once, at most: a burst of due decisions queues here instead of opening sockets. */
const MAX_EARLY_IN_FLIGHT = 256;
const MIN_EARLY_IN_FLIGHT = 4;
/**
 * While decisions are queued or running, a probe timer every PROBE_MS: firing more than LAG_HIGH_MS late (requests
 * waited as long), the bound on decisions in flight halves; under LAG_LOW_MS it grows by 4 (additive increase,
 * multiplicative decrease, as TCP's window). At 10,000 viewers a break's decisions need ~70% of a core for seconds.
 */
const PROBE_MS = 10;
/** Decisions of breaks already in the window (a playlist waits on each, up to the deadline) running at once, at most. */
const MAX_IN_WINDOW = 256;
const LAG_HIGH_MS = 8;
const LAG_LOW_MS = 2;

export class DecisionScheduler {
  /**
   * early decisions scheduled or running, by avail then session (the session's own id string, no key made per
   * viewer): a reload while one is pending adds nothing
   */
  private readonly pending = new Map<string, Map<string, Early>>();
  private readonly epoch: number;
  /**
   * Scheduled early decisions as a binary min-heap on dueAt, under one timer: 10,000 viewers' decisions of a break
   * are 10,000 small entries rather than 10,000 timers, promises and closures (memory per viewer).
   */
  private readonly heap: Early[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private inFlight = 0;
  private inWindowRunning = 0;
  private limit: number;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly random: () => number;

  constructor(private readonly deps: DecisionSchedulerDeps) {
    this.random = deps.random ?? Math.random;
    this.epoch = deps.now();
    this.limit = deps.adaptive === false ? MAX_EARLY_IN_FLIGHT : 32;
  }

  /** How many early decisions may run at once now (adapted to the event loop's lag). */
  get inFlightBound(): number {
    return this.limit;
  }

  /** Whether an early decision of this avail is scheduled or running. */
  isPending(sid: string, availId: string): boolean {
    return this.pending.get(availId)?.has(sid) ?? false;
  }

  /** Now in whole ms since the scheduler started. */
  private clock(): number {
    return Math.round(this.deps.now() - this.epoch);
  }

  /**
   * Decides a break ahead of time: at a random moment of the first (lead − margin) ms, the margin (one target
   * duration) leaving room for the decision before the break enters the window. `onEarly` receives the record.
   * Returns at once.
   */
  ahead(task: DecisionTask, leadMs: number): void {
    const sid = task.session.id;
    let ofAvail = this.pending.get(task.avail.id);
    if (ofAvail?.has(sid) || this.closed) return;
    const margin = task.targetDuration * 1000;
    const now = this.clock();
    const slack = Math.max(0, Math.round(leadMs - margin));
    const early: Early = { task, dueAt: now + Math.round(slack * this.random()), latest: now + slack };
    if (!ofAvail) this.pending.set(task.avail.id, ofAvail = new Map());
    ofAvail.set(sid, early);
    this.push(early);
    this.pump();
    this.startProbe();
  }

  /** The event-loop lag probe, running while early decisions are queued or in flight. */
  private startProbe(): void {
    if (this.probe || this.closed || this.deps.adaptive === false) return;
    const expected = performance.now() + PROBE_MS;
    this.probe = setTimeout(() => {
      this.probe = undefined;
      const lag = performance.now() - expected;
      if (lag > LAG_HIGH_MS) this.limit = Math.max(MIN_EARLY_IN_FLIGHT, this.limit >> 1);
      else if (lag < LAG_LOW_MS) this.limit = Math.min(MAX_EARLY_IN_FLIGHT, this.limit + 4);
      this.pump();
      if (this.heap.length || this.inFlight) this.startProbe();
    }, PROBE_MS);
    this.probe.unref();
  }

  /** Starts the due decisions (up to the in-flight bound), then sets the one timer for the next. */
  private pump(): void {
    const now = this.clock();
    // Past the adaptive bound only a decision at the end of its slack starts (the bound smooths, never postpones a
    // decision past the moment its break needs it).
    while (this.heap.length && this.heap[0]!.dueAt <= now
      && (this.inFlight < this.limit || (this.heap[0]!.latest <= now && this.inFlight < MAX_EARLY_IN_FLIGHT))) this.run(this.pop()!);
    const next = this.heap[0];
    if (!next || this.inFlight >= this.limit || this.closed) return; // a finishing decision (or the probe) pumps again
    if (this.timer && this.timerAt <= next.dueAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next.dueAt;
    this.timer = setTimeout(() => { this.timer = undefined; this.timerAt = Infinity; this.pump(); }, Math.max(0, next.dueAt - now));
    this.timer.unref();
  }

  private run(early: Early): void {
    this.inFlight++;
    const { task } = early;
    this.deps.planner.recordFor(task.session, task.adServer, task.avail, task.targetDuration, task.shape)
      .then((r) => { this.deps.metrics.decisionsEarly.inc(); this.deps.onEarly?.(task, r); }, () => undefined)
      .finally(() => {
        this.inFlight--;
        const ofAvail = this.pending.get(task.avail.id);
        ofAvail?.delete(task.session.id);
        if (ofAvail?.size === 0) this.pending.delete(task.avail.id);
        this.pump();
      });
  }

  private push(e: Early): void {
    const h = this.heap;
    let i = h.push(e) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent]!.dueAt <= e.dueAt) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = e;
  }

  private pop(): Early | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (!h.length || !last) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const c = l + 1 < h.length && h[l + 1]!.dueAt < h[l]!.dueAt ? l + 1 : l;
      if (h[c]!.dueAt >= last.dueAt) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = last;
    return top;
  }

  /** The decision of a break in the window, or after the deadline the late record (slate or content). */
  async inWindow(task: DecisionTask): Promise<AvailRecord> {
    const { deadlineMs } = this.deps;
    if (deadlineMs === undefined) return this.deps.planner.recordFor(task.session, task.adServer, task.avail, task.targetDuration, task.shape);
    if (this.inWindowRunning >= (this.deps.maxInWindow ?? MAX_IN_WINDOW)) {
      // A flood (thousands of viewers joining with a break in the window): more decisions now would only be late and
      // hold every playlist behind them; these viewers get the late record at once.
      this.deps.metrics.decisionsLate.inc();
      return this.deps.planner.lateRecord(task.session, task.avail, task.targetDuration, task.shape);
    }
    this.inWindowRunning++;
    const deciding = this.deps.planner.recordFor(task.session, task.adServer, task.avail, task.targetDuration, task.shape);
    void deciding.finally(() => { this.inWindowRunning--; }).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), deadlineMs); });
    const first = await Promise.race([deciding, late]);
    clearTimeout(timer);
    if (first !== 'late') return first;
    this.deps.metrics.decisionsLate.inc();
    deciding.catch(() => undefined); // it goes on, and finds the late record stored
    return this.deps.planner.lateRecord(task.session, task.avail, task.targetDuration, task.shape);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.probe) clearTimeout(this.probe);
    this.timer = undefined;
    this.probe = undefined;
    this.heap.length = 0;
  }
}
