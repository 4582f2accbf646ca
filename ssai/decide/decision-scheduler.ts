// When a session's ad decisions are made (issue 19 point 4, issue 28): a break announced ahead (a cue or DATERANGE
// whose start lies past the window's end) is decided in the background within its lead time, so 10,000 viewers'
// decisions are spread over seconds instead of landing in one reload; a break already in the window is decided while
// the playlist waits. Decisions of breaks in the window are queued, never refused: each waits as long as its playlist
// can (the decision deadline), and only one that would miss it falls back to slate or content. Per configuration, an
// optional ad_server_max_rps paces every decision sent to its ad server (ad-server-pacer.ts): breaks in the window
// first, then the announced ones, spread evenly over the time left before their break.
import type { AdPlanner } from './ad-planner.js';
import type { AvailRecord, SessionRecord } from './avail-record.js';
import type { BreakPolicies } from './break-policy.js';
import { AdServerPacer } from './ad-server-pacer.js';
import type { ContentShape } from '../stitch/content-shape.js';
import type { Avail } from '../parse/cue-finder.js';
import { heapPop, heapPush } from './min-heap.js';
import type { SsaiMetrics } from '../metrics.js';

export interface DecisionSchedulerDeps {
  planner: Pick<AdPlanner, 'recordFor' | 'lateRecord'>;
  metrics: Pick<SsaiMetrics, 'decisionsEarly' | 'decisionsLate' | 'decisionsAheadLate' | 'adServerRequests' | 'decisionQueue' | 'decisionsInFlight' | 'decisionSeconds'>;
  now: () => number;
  /** how long a playlist waits for the decision of a break in its window (default: unbounded) */
  deadlineMs?: number;
  random?: () => number;
  /**
   * Early decisions back off while the event loop lags (default true): false keeps the bound at its maximum (or at
   * `fixedBound`). The playlists are the urgent work; an early decision has seconds of slack before its break enters
   * the window.
   */
  adaptive?: boolean;
  /** with `adaptive: false`, the bound (default its maximum, 256): tests of what goes past it */
  fixedBound?: number;
  /** decisions of breaks in the window running at once, at most (default 256); the others wait in line */
  maxInWindow?: number;
  /** an early decision was made: one callback for all (a closure per viewer would cost ~120 B while it waits) */
  onEarly?: (task: DecisionTask, record: AvailRecord) => void;
  /** the configuration's ad_server_max_rps by guid (undefined: no cap), read again every CAP_REFRESH_MS */
  adServerMaxRps?: (guid: string) => Promise<number | undefined>;
}

/** `policies`: the configuration's ad-operations policies a decision applies (issue 31). */
export type DecisionTask = { session: SessionRecord; adServer: string; avail: Avail; targetDuration: number; shape?: ContentShape; policies?: BreakPolicies };

const SCHEDULED = 0; // early, waiting for its random moment in the heap
const READY = 1; // in its configuration's line
const RUNNING = 2;
const DONE = 3; // decided, or dropped at its deadline before it was sent
const HELD = 4; // in the window, no playlist waiting on it: in its configuration's held line until `latest` at most

type Deferred = { promise: Promise<AvailRecord | undefined>; resolve: (r: AvailRecord | undefined) => void; reject: (e: unknown) => void };

/**
 * A decision waiting for its moment, in line, or running. Its times are whole ms since the scheduler started: small
 * integers the object holds inline, where epoch times would be a 16-byte heap number each (10,000 wait at once).
 */
type Entry = {
  task: DecisionTask;
  lane: Lane;
  dueAt: number;
  /** early or held: the end of its slack (its break needs it by then); in the window: unused */
  latest: number;
  /** a playlist waits on it (its break is in the window) */
  urgent: boolean;
  state: number;
  /** when a playlist waits: the record, or undefined when dropped at the deadline */
  outcome?: Deferred;
};

/** One configuration's line of decisions and its pacer (absent: no ad_server_max_rps). */
type Lane = {
  guid: string;
  /** breaks in the window, first come first served (`head` is the first still in line) */
  urgent: Entry[];
  head: number;
  /**
   * breaks in the window whose playlists went out without them (ended before the break, issue 28): first come first
   * served, sent as the event loop allows (the adaptive bound), each by the end of its slack at the latest
   */
  held: Entry[];
  heldHead: number;
  /** announced breaks whose moment came, by the end of their slack */
  early: Entry[];
  earlyWaiting: number;
  pacer: AdServerPacer | undefined;
  capKnown: boolean;
  checking: boolean;
  checkedAt: number;
  lastEarlyAt: number;
  /** when the last held decision was sent: the held line drains no slower than evenly to the end of its head's slack */
  lastHeldAt: number;
  timer: NodeJS.Timeout | undefined;
  timerAt: number;
};

const byDue = (e: Entry): number => e.dueAt;
const byLatest = (e: Entry): number => e.latest;

/**
 * When the held line's head may go past the adaptive bound: the line spread evenly over the time left to its head's
 * end of slack (its waiting count includes entries taken since, which only hastens it), the end of slack at the latest.
 */
function heldDueAt(lane: Lane, head: Entry, now: number): number {
  const waiting = Math.max(1, lane.held.length - lane.heldHead);
  return Math.min(head.latest, lane.lastHeldAt + Math.max(0, head.latest - now) / waiting);
}

/** Early decisions running at once, at most: a burst of due decisions queues here instead of opening sockets. */
const MAX_EARLY_IN_FLIGHT = 256;
const MIN_EARLY_IN_FLIGHT = 4;
/**
 * While decisions are queued or running, a probe timer every PROBE_MS: firing more than LAG_HIGH_MS late (requests
 * waited as long), the bound on decisions in flight halves; under LAG_LOW_MS it grows by 4 (additive increase,
 * multiplicative decrease, as TCP's window). At 10,000 viewers a break's decisions need ~70% of a core for seconds.
 */
const PROBE_MS = 10;
/**
 * Decisions of breaks already in the window running at once, at most: more would hold every playlist behind them on
 * the event loop. The rest wait in line (issue 28: refusing them left 740 of 1,000 joining viewers without their ad).
 */
const MAX_IN_WINDOW = 256;
/**
 * Held decisions past the adaptive bound in flight at most while they drain evenly (at the end of its slack one goes
 * whatever runs, up to MAX_IN_WINDOW). A no-notice break at 10,000 viewers (bench/ssai-capacity.ts, the ad server on
 * the same two cores): with 256 in flight a decision took 150-400 ms and 700-1,300 left a second; with 48, 12-25 ms
 * and up to 3,100. An ad server far away needs more in flight for its rate: they go by the end of their slack, as
 * before this bound, when all went then.
 */
const HELD_SPREAD_IN_FLIGHT = 48;
const LAG_HIGH_MS = 8;
const LAG_LOW_MS = 2;
/** How often a configuration's ad_server_max_rps is read again (the configuration cache's own TTL is 10 s). */
const CAP_REFRESH_MS = 10_000;

export class DecisionScheduler {
  /** decisions scheduled, in line or running, by avail then session: a reload while one is pending adds nothing */
  private readonly pending = new Map<string, Map<string, Entry>>();
  private readonly epoch: number;
  /** early decisions waiting for their random moment, a min-heap on dueAt under one timer */
  private readonly heap: Entry[] = [];
  private readonly lanes = new Map<string, Lane>();
  /** lanes with decisions in line */
  private readonly active = new Set<Lane>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private inFlight = 0;
  private inWindowRunning = 0;
  private inWindowWaiting = 0;
  private heldWaiting = 0;
  private aheadWaiting = 0;
  private limit: number;
  private probe: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly random: () => number;
  private readonly depth: { inWindow: { set(n: number): void }; ahead: { set(n: number): void } };

  constructor(private readonly deps: DecisionSchedulerDeps) {
    this.random = deps.random ?? Math.random;
    this.epoch = deps.now();
    this.limit = deps.adaptive === false ? deps.fixedBound ?? MAX_EARLY_IN_FLIGHT : 32;
    this.depth = { inWindow: deps.metrics.decisionQueue.labels({ kind: 'in_window' }), ahead: deps.metrics.decisionQueue.labels({ kind: 'ahead' }) };
  }

  /** How many early decisions may run at once now (adapted to the event loop's lag). */
  get inFlightBound(): number {
    return this.limit;
  }

  /** Decisions waiting for their turn: of breaks in the window, and of breaks announced ahead. */
  get queued(): { inWindow: number; ahead: number } {
    return { inWindow: this.inWindowWaiting, ahead: this.aheadWaiting };
  }

  /** Whether a decision of this avail is scheduled, in line or running. */
  isPending(sid: string, availId: string): boolean {
    return this.pending.get(availId)?.has(sid) ?? false;
  }

  /** Now in whole ms since the scheduler started. */
  private clock(): number {
    return Math.round(this.deps.now() - this.epoch);
  }

  /**
   * Decides a break ahead of time, within the first (lead − margin) ms, the margin (one target duration, a second more
   * under a cap) leaving room for the decision before the break enters the window: without a cap at a random moment
   * of it, under a cap in line, sent evenly spread over it. `onEarly` receives the record. Returns at once.
   */
  ahead(task: DecisionTask, leadMs: number): void {
    const sid = task.session.id;
    let ofAvail = this.pending.get(task.avail.id);
    if (ofAvail?.has(sid) || this.closed) return;
    const lane = this.laneOf(task.session.guid);
    const capped = lane.capKnown && lane.pacer !== undefined;
    // Under a cap the decisions are sent up to the end of their slack: it also ends a second earlier, as the lead is
    // counted from the window's end while the playlist may be up to a target duration old (none sent in the last second).
    const margin = task.targetDuration * 1000 + (capped ? 1000 : 0);
    const now = this.clock();
    const slack = Math.max(0, Math.round(leadMs - margin));
    const e: Entry = { task, lane, dueAt: capped ? now : now + Math.round(slack * this.random()), latest: now + slack, urgent: false, state: SCHEDULED };
    if (!ofAvail) this.pending.set(task.avail.id, ofAvail = new Map());
    ofAvail.set(sid, e);
    this.aheadWaiting++;
    if (capped) this.enterLine(e);
    else heapPush(this.heap, e, byDue);
    this.pump();
    this.startProbe();
  }

  /**
   * The decision of a break in the window, or the late record (slate or content) when it would miss the deadline: a
   * decision still in line then is never sent; one running goes on and finds the late record stored. `deadlineMs`:
   * how long this caller can wait (the configured deadline, or longer for a playlist that need not wait, issue 28).
   * `slackMs`: the playlist went out without this break (issue 28), so the decision may wait in line that long, sent
   * as the event loop allows: at a no-notice break's start every viewer needs one at once, and sent at once their
   * replies, plans and stored records held every playlist behind them. A later call without slack (a playlist that
   * now waits for it) sends it first.
   */
  async inWindow(task: DecisionTask, deadlineMs = this.deps.deadlineMs ?? Infinity, slackMs = 0): Promise<AvailRecord> {
    const sid = task.session.id;
    let ofAvail = this.pending.get(task.avail.id);
    let e = ofAvail?.get(sid);
    if (e && !e.urgent) {
      // Announced ahead but not decided yet: its break is here, so it goes first now.
      if (e.state !== RUNNING) {
        this.deps.metrics.decisionsAheadLate.inc();
        if (e.state === READY) e.lane.earlyWaiting--; // (left in the early heap, skipped there)
        this.aheadWaiting--;
        this.inWindowWaiting++;
        e.state = READY;
        e.lane.urgent.push(e);
        this.active.add(e.lane);
      }
      e.urgent = true;
    } else if (e?.state === HELD && slackMs <= 0) {
      // held, and now a playlist waits for it: to the urgent line (left in the held one, skipped there)
      this.heldWaiting--;
      e.state = READY;
      e.lane.urgent.push(e);
      this.active.add(e.lane);
    } else if (!e && !this.closed) {
      const lane = this.laneOf(task.session.guid);
      const now = this.clock();
      const held = slackMs > 0;
      e = { task, lane, dueAt: now, latest: now + (held ? Math.round(slackMs) : 0), urgent: true, state: held ? HELD : READY };
      if (!ofAvail) this.pending.set(task.avail.id, ofAvail = new Map());
      ofAvail.set(sid, e);
      this.inWindowWaiting++;
      if (held) {
        this.heldWaiting++;
        lane.held.push(e);
        this.startProbe();
      } else lane.urgent.push(e);
      this.active.add(lane);
    }
    if (!e) return this.deps.planner.recordFor(task.session, task.adServer, task.avail, task.targetDuration, task.shape, task.policies);
    const entry = e;
    entry.outcome ??= deferred();
    this.pumpLane(entry.lane);
    let timer: NodeJS.Timeout | undefined;
    const late = Number.isFinite(deadlineMs) ? new Promise<undefined>((r) => { timer = setTimeout(() => r(undefined), deadlineMs); }) : undefined;
    const first = late ? await Promise.race([entry.outcome.promise, late]) : await entry.outcome.promise;
    clearTimeout(timer);
    if (first) return first;
    if (entry.state === READY || entry.state === HELD) this.drop(entry); // never sent: the ad server is spared a request nobody waits for
    this.deps.metrics.decisionsLate.inc();
    return this.deps.planner.lateRecord(task.session, task.avail, task.targetDuration, task.shape);
  }

  private laneOf(guid: string): Lane {
    let lane = this.lanes.get(guid);
    if (!lane) {
      lane = { guid, urgent: [], head: 0, held: [], heldHead: 0, early: [], earlyWaiting: 0, pacer: undefined, capKnown: !this.deps.adServerMaxRps, checking: false, checkedAt: 0, lastEarlyAt: -Infinity, lastHeldAt: -Infinity, timer: undefined, timerAt: Infinity };
      this.lanes.set(guid, lane);
      this.readCap(lane);
    }
    return lane;
  }

  /** Reads the configuration's cap (a lane sends nothing before its first answer), then runs what may run. */
  private readCap(lane: Lane): void {
    const read = this.deps.adServerMaxRps;
    if (!read || lane.checking) return;
    lane.checking = true;
    read(lane.guid).then((rps) => {
      if (rps === undefined) lane.pacer = undefined;
      else if (lane.pacer?.maxPerSecond !== rps) lane.pacer = new AdServerPacer(rps, this.deps.now() - this.epoch);
    }, () => undefined).finally(() => {
      lane.checking = false;
      lane.capKnown = true;
      lane.checkedAt = this.clock();
      this.pumpLane(lane);
    });
  }

  private enterLine(e: Entry): void {
    e.state = READY;
    heapPush(e.lane.early, e, byLatest);
    e.lane.earlyWaiting++;
    this.active.add(e.lane);
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
      if (this.aheadWaiting || this.heldWaiting || this.inFlight) this.startProbe();
    }, PROBE_MS);
    this.probe.unref();
  }

  /** Moves the early decisions whose moment came into their lines, runs what may run, sets the one timer for the next. */
  private pump(): void {
    if (this.closed) return;
    const now = this.clock();
    while (this.heap.length && this.heap[0]!.dueAt <= now) {
      const e = heapPop(this.heap, byDue)!;
      if (e.state === SCHEDULED && !e.urgent) this.enterLine(e); // (one taken by its playlist meanwhile is in its urgent line)
    }
    for (const lane of this.active) this.pumpLane(lane);
    const next = this.heap[0];
    if (!next || (this.timer && this.timerAt <= next.dueAt)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next.dueAt;
    this.timer = setTimeout(() => { this.timer = undefined; this.timerAt = Infinity; this.pump(); }, Math.max(0, next.dueAt - now));
    this.timer.unref();
  }

  /** Sends what a lane may send now: its breaks in the window first, then its early decisions; wakes when the cap allows more. */
  private pumpLane(lane: Lane): void {
    if (this.closed) return;
    if (!lane.capKnown) return; // readCap pumps it
    const now = this.clock();
    if (now - lane.checkedAt > CAP_REFRESH_MS) this.readCap(lane);
    for (;;) {
      while (lane.head < lane.urgent.length && lane.urgent[lane.head]!.state !== READY) lane.head++;
      if (lane.head > 1024 && lane.head * 2 > lane.urgent.length) { lane.urgent.splice(0, lane.head); lane.head = 0; }
      while (lane.heldHead < lane.held.length && lane.held[lane.heldHead]!.state !== HELD) lane.heldHead++;
      if (lane.heldHead > 1024 && lane.heldHead * 2 > lane.held.length) { lane.held.splice(0, lane.heldHead); lane.heldHead = 0; }
      while (lane.early.length && (lane.early[0]!.state !== READY || lane.early[0]!.urgent)) heapPop(lane.early, byLatest);
      let e: Entry | undefined;
      let earlyAt = now;
      const u = lane.urgent[lane.head];
      const h = lane.held[lane.heldHead];
      const heldDue = h ? heldDueAt(lane, h, now) : Infinity;
      if (u && this.inWindowRunning < (this.deps.maxInWindow ?? MAX_IN_WINDOW)) e = u;
      // (a held decision goes before the early ones: its break is here. Past the bound the held line still drains evenly
      // to the end of its head's slack: held to the bound and sent at the end of their slack, a no-notice break's
      // decisions left the ad server idle while the event loop lagged, then went out thousands at once, and their
      // replies held every playlist behind them: p99 ~650 ms at 10,000 viewers, bench/ssai-capacity.ts)
      else if (h && this.inWindowRunning < (this.deps.maxInWindow ?? MAX_IN_WINDOW) && (this.inFlight < this.limit || (heldDue <= now && (this.inFlight < HELD_SPREAD_IN_FLIGHT || h.latest <= now)))) e = h;
      else {
        if (h && h.latest > now) {
          // sent evenly, by the end of its slack at the latest (due already: the running ones are at their bound, and
          // one ending pumps again)
          this.wake(lane, (heldDue > now ? heldDue : h.latest) - now);
        }
        const x = lane.early[0];
        // Past the adaptive bound only a decision at the end of its slack starts (the bound smooths, never postpones a
        // decision past the moment its break needs it).
        if (x && (this.inFlight < this.limit || (x.latest <= now && this.inFlight < MAX_EARLY_IN_FLIGHT))) {
          if (lane.pacer) {
            // Evenly over the time left: as many sends as wait, spread to the earliest end of slack among them.
            const at = lane.lastEarlyAt + Math.max(0, x.latest - now) / Math.max(1, lane.earlyWaiting);
            if (at > now) { this.wake(lane, at - now); break; }
            // the next counts from this one's moment (timers fire in whole ms: no drift), a late timer catching up 100 ms at most
            earlyAt = Math.max(at, now - 100);
          }
          e = x;
        }
      }
      if (!e) break;
      if (lane.pacer) {
        const t = this.deps.now() - this.epoch;
        const wait = lane.pacer.waitMs(t);
        if (wait > 0) { this.wake(lane, wait); break; }
        lane.pacer.take(t);
      }
      if (e === h) {
        // (past the bound the next counts from this one's moment, as early ones do; under it, from now)
        lane.lastHeldAt = this.inFlight < this.limit ? now : Math.max(heldDue, now - 100);
        lane.heldHead++;
        this.heldWaiting--;
      }
      else if (e.urgent) lane.head++;
      else { heapPop(lane.early, byLatest); lane.earlyWaiting--; lane.lastEarlyAt = earlyAt; }
      this.run(e, now);
    }
    if (lane.head >= lane.urgent.length && lane.heldHead >= lane.held.length && !lane.early.length) {
      lane.urgent.length = 0;
      lane.head = 0;
      lane.held.length = 0;
      lane.heldHead = 0;
      this.active.delete(lane);
    }
    this.depth.inWindow.set(this.inWindowWaiting);
    this.depth.ahead.set(this.aheadWaiting);
  }

  /** One timer per lane, for the moment its cap or its spread lets the next decision go. */
  private wake(lane: Lane, ms: number): void {
    const at = this.clock() + Math.ceil(ms);
    if (lane.timer && lane.timerAt <= at) return;
    if (lane.timer) clearTimeout(lane.timer);
    lane.timerAt = at;
    lane.timer = setTimeout(() => { lane.timer = undefined; lane.timerAt = Infinity; this.pumpLane(lane); }, Math.ceil(ms));
    lane.timer.unref();
  }

  /** One from the held line counts under the adaptive bound as well as among the window's. */
  private run(e: Entry, now: number): void {
    const urgent = e.urgent;
    const held = e.state === HELD;
    e.state = RUNNING;
    if (held) this.inFlight++;
    if (urgent) { this.inWindowWaiting--; this.inWindowRunning++; } else {
      this.aheadWaiting--;
      this.inFlight++;
      if (now > e.latest) this.deps.metrics.decisionsAheadLate.inc();
    }
    this.deps.metrics.adServerRequests.inc();
    this.deps.metrics.decisionsInFlight.inc();
    const sentAt = performance.now();
    const { task } = e;
    this.deps.planner.recordFor(task.session, task.adServer, task.avail, task.targetDuration, task.shape, task.policies)
      .then((r) => {
        // (taken by its playlist while it ran: that one merges the record)
        if (!e.urgent) { this.deps.metrics.decisionsEarly.inc(); this.deps.onEarly?.(task, r); }
        e.outcome?.resolve(r);
      }, (err: unknown) => { e.outcome?.reject(err); })
      .finally(() => {
        this.deps.metrics.decisionsInFlight.dec();
        this.deps.metrics.decisionSeconds.observe((performance.now() - sentAt) / 1000);
        e.state = DONE;
        if (urgent) this.inWindowRunning--;
        if (!urgent || held) this.inFlight--;
        this.forget(e);
        this.pump();
      });
  }

  /** A decision of a break in the window whose deadline passed while it waited in line: never sent. */
  private drop(e: Entry): void {
    if (e.state === HELD) this.heldWaiting--;
    e.state = DONE;
    this.inWindowWaiting--;
    this.forget(e);
    e.outcome?.resolve(undefined); // other playlists of the session waiting on it take the late record now
    this.depth.inWindow.set(this.inWindowWaiting);
  }

  private forget(e: Entry): void {
    const ofAvail = this.pending.get(e.task.avail.id);
    if (ofAvail?.get(e.task.session.id) !== e) return;
    ofAvail.delete(e.task.session.id);
    if (ofAvail.size === 0) this.pending.delete(e.task.avail.id);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.probe) clearTimeout(this.probe);
    for (const lane of this.lanes.values()) if (lane.timer) clearTimeout(lane.timer);
    this.timer = undefined;
    this.probe = undefined;
    this.heap.length = 0;
  }
}

function deferred(): Deferred {
  let resolve!: Deferred['resolve'];
  let reject!: Deferred['reject'];
  const promise = new Promise<AvailRecord | undefined>((res, rej) => { resolve = res; reject = rej; });
  promise.catch(() => undefined); // a rejection nobody waits for any more is not unhandled
  return { promise, resolve, reject };
}
