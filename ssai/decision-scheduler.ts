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
}

export type DecisionTask = { session: SessionRecord; adServer: string; avail: Avail; targetDuration: number; shape?: ContentShape };

export class DecisionScheduler {
  /** early decisions scheduled or running, by session and avail: a reload while one is pending adds nothing */
  private readonly pending = new Map<string, Promise<AvailRecord | undefined>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly random: () => number;

  constructor(private readonly deps: DecisionSchedulerDeps) {
    this.random = deps.random ?? Math.random;
  }

  /** Whether an early decision of this avail is scheduled or running. */
  isPending(sid: string, availId: string): boolean {
    return this.pending.has(`${sid} ${availId}`);
  }

  /**
   * Decides a break ahead of time: at a random moment of the first (lead − margin) ms, the margin leaving room for the
   * decision before the break enters the window. `done` receives the record. Returns at once.
   */
  ahead(task: DecisionTask, leadMs: number, done: (record: AvailRecord) => void): void {
    const key = `${task.session.id} ${task.avail.id}`;
    if (this.pending.has(key)) return;
    const margin = 2 * task.targetDuration * 1000;
    const delay = Math.max(0, leadMs - margin) * this.random();
    const promise = new Promise<AvailRecord | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.deps.planner.recordFor(task.session, task.adServer, task.avail, task.targetDuration, task.shape)
          .then((r) => { this.deps.metrics.decisionsEarly.inc(); done(r); resolve(r); }, () => resolve(undefined));
      }, delay);
      timer.unref();
      this.timers.add(timer);
    }).finally(() => this.pending.delete(key));
    this.pending.set(key, promise);
  }

  /** The decision of a break in the window, or after the deadline the late record (slate or content). */
  async inWindow(task: DecisionTask): Promise<AvailRecord> {
    const deciding = this.deps.planner.recordFor(task.session, task.adServer, task.avail, task.targetDuration, task.shape);
    const { deadlineMs } = this.deps;
    if (deadlineMs === undefined) return deciding;
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
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
