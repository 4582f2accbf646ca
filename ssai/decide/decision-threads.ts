// Ad decisions on worker threads (issue 19 point 4): the ad server round trip and the VAST parsing of a break's
// thousands of personal decisions run beside the event loop that answers playlists, instead of in it. At 10,000
// viewers they are a burst of ~2,000 decisions a second in the seconds before each break: on the playlists' own
// thread that burst held every reload behind it (bench/ssai-capacity.ts). The planner, the store and the creatives
// stay on the main thread; only the request and its answer cross, as structured-cloned plain data.
import { Worker } from 'node:worker_threads';
import { batchedSender } from './message-batch.js';
import { HeapAsks, type HeapReport } from './thread-heap.js';
import { threadCpuMs, type NamedThread } from './thread-times.js';
import { fillAdServerUrl, type AdDecisionClient, type AdDecisionRequest, type AdDecisionResult, type VastDecisionOptions } from './vast-decision.js';

/**
 * a decision of an ad server URL (filled in here: only the URL crosses, not the request with its decoded cue), or a
 * VAST document in hand to read (a VMAP break's inline VAST)
 */
export type DecisionThreadAsk = { id: number; url: string; text?: undefined } | { id: number; text: string; url: string };
export type DecisionThreadAnswer = { id: number; result: AdDecisionResult };
// (both cross as arrays: the asks and the answers of one turn of the sender's event loop)

/** The options a thread can receive: plain values (a clock or a random source cannot cross to a thread). */
export type DecisionThreadOptions = Pick<VastDecisionOptions, 'budgetMs' | 'maxWrapperDepth' | 'maxBodyBytes' | 'inlineFastPath'>;

const ENTRY = new URL('./decision-thread-entry.mjs', import.meta.url);

type Open = { resolve: (result: AdDecisionResult) => void; deadline: number };
/**
 * `send`: the asks of one turn of the event loop go as one message. `heardAt`: when the thread last answered (or
 * started); `overdueSince`: when one of its decisions first outlasted its deadline since then. `tid`: its OS task id
 * (Linux, told by the thread), `cpuAt`: its CPU time when its silence was last looked at.
 */
type Thread = {
  worker: Worker; open: Map<number, Open>; send: (ask: DecisionThreadAsk) => void; heardAt: number; overdueSince: number | undefined;
  tid: number | undefined; cpuAt: { ms: number; cpuMs: number } | undefined;
  heapAsks: HeapAsks;
};
/** what a thread posts: its answers, once at its start its OS task id, or its heap in use when asked */
type ThreadMessage = DecisionThreadAnswer[] | { tid: number } | HeapReport;

/**
 * A thread answers within the decision budget (VastDecisionClient ends every chain by then). A decision past the
 * budget and this grace fails alone, as a timeout (its playlist has stopped waiting). A thread that also has answered
 * nothing for the grace is ended only when it spins (its CPU time grows by a fifth of the wall time or more, from /proc on
 * Linux; elsewhere its silence is enough): a thread the OS does not run is starved, not stuck. The threads are nicer
 * than the playlists (SSAI_DECISION_NICE), so on a machine loaded by other processes they get almost no core; ending
 * them failed every decision they held and started cold ones (a 2,000-viewer soak beside eight busy processes filled
 * 8% of its breaks, every failure `the decision thread ended`).
 */
const GRACE_MS = 2_000;
const WATCH_MS = 500;

export class ThreadedDecisionClient implements AdDecisionClient {
  private readonly threads: Array<Thread | undefined>;
  private next = 0;
  private ids = 0;
  private closed = false;
  private watch: NodeJS.Timeout | undefined;

  constructor(private readonly options: {
    threads: number;
    decision?: DecisionThreadOptions;
    /** the thread's module (default: decision-thread-entry.mjs); tests give one that misbehaves */
    entry?: URL;
    /** see GRACE_MS */
    graceMs?: number;
    /** how much nicer than the process the threads run (Linux): decisions take the cores the playlists leave (decision-thread-body.ts) */
    nice?: number;
  }) {
    if (!Number.isInteger(options.threads) || options.threads < 1) throw new RangeError('a threaded decision client needs at least one thread');
    this.threads = new Array<Thread | undefined>(options.threads).fill(undefined);
  }

  decide(req: AdDecisionRequest): Promise<AdDecisionResult> {
    const url = fillAdServerUrl(req.adServerUrl, req);
    return this.ask((id) => ({ id, url }));
  }

  /** Reads a VAST or VMAP document already in hand, as VastDecisionClient.fromText. */
  fromText(text: string, url: string): Promise<AdDecisionResult> {
    return this.ask((id) => ({ id, text, url }));
  }

  private ask(message: (id: number) => DecisionThreadAsk): Promise<AdDecisionResult> {
    if (this.closed) return Promise.resolve(stopped('the decision threads are closed'));
    const slot = this.next;
    this.next = (this.next + 1) % this.threads.length;
    const thread = this.threads[slot] ?? this.spawn(slot);
    const id = ++this.ids;
    const deadline = Date.now() + (this.options.decision?.budgetMs ?? 3_000) + (this.options.graceMs ?? GRACE_MS);
    this.watchOpenDecisions();
    // an idle thread's silence so far is not a stuck one's: it is timed from this ask
    if (!thread.open.size && thread.overdueSince === undefined) thread.heardAt = Date.now();
    return new Promise((resolve) => {
      thread.open.set(id, { resolve, deadline });
      thread.send(message(id));
    });
  }

  /** One timer for all open decisions, running while any is open: a stuck thread is ended (see GRACE_MS). */
  private watchOpenDecisions(): void {
    if (this.watch) return;
    this.watch = setInterval(() => {
      const now = Date.now();
      let open = 0;
      const grace = this.options.graceMs ?? GRACE_MS;
      for (const thread of this.threads) {
        if (!thread) continue;
        for (const [id, { deadline, resolve }] of thread.open) {
          if (deadline > now) continue;
          thread.open.delete(id); // its late answer, if any, is dropped
          thread.overdueSince ??= now;
          resolve({ ok: false, error: { reason: 'timeout', message: 'no answer from the decision thread in time' } });
        }
        if (thread.overdueSince !== undefined && now - thread.heardAt >= grace && spinning(thread, now)) void thread.worker.terminate(); // its exit fails what it held
        open += thread.open.size + (thread.overdueSince === undefined ? 0 : 1);
      }
      if (!open) { clearInterval(this.watch); this.watch = undefined; }
    }, WATCH_MS);
    this.watch.unref();
  }

  /** Starts the threads (the first viewer's session does: its first decision then finds them ready). */
  prepare(): void {
    if (this.closed) return;
    for (let slot = 0; slot < this.threads.length; slot++) if (!this.threads[slot]) this.spawn(slot);
  }

  /** Started with the first session or decision: an engine that serves no playback runs no thread. */
  private spawn(slot: number): Thread {
    // A young generation larger than a worker's default: a decision's garbage (the VAST text, its parse) dies young
    // instead of being promoted and collected by a full mark-compact every ~100 ms (seen with --trace-gc).
    const worker = new Worker(this.options.entry ?? ENTRY, { workerData: { ...this.options.decision, nice: this.options.nice ?? 0 }, resourceLimits: { maxYoungGenerationSizeMb: 48 } });
    // A thread must not keep the process alive: the engine's close (or its end) terminates it.
    worker.unref();
    const thread: Thread = {
      worker, open: new Map(), send: batchedSender((batch) => worker.postMessage(batch)), heardAt: Date.now(), overdueSince: undefined, tid: undefined, cpuAt: undefined, heapAsks: new HeapAsks(),
    };
    worker.on('message', (answers: ThreadMessage) => {
      if (!Array.isArray(answers)) {
        if ('tid' in answers) thread.tid = answers.tid;
        else thread.heapAsks.answer(answers.heapUsed);
        return;
      }
      thread.heardAt = Date.now();
      thread.overdueSince = undefined;
      thread.cpuAt = undefined;
      for (const answer of answers) {
        const open = thread.open.get(answer.id);
        thread.open.delete(answer.id);
        open?.resolve(answer.result);
      }
    });
    const lost = (why: string) => {
      // Its open decisions fail as an ad server failure would (the breaks play slate); the next decision starts a new thread.
      if (this.threads[slot] === thread) this.threads[slot] = undefined;
      for (const { resolve } of thread.open.values()) resolve(stopped(why));
      thread.open.clear();
      thread.heapAsks.answer(0);
    };
    worker.on('error', (e) => lost(`the decision thread failed: ${e.message}`));
    worker.on('exit', (code) => lost(`the decision thread ended (exit code ${code})`));
    this.threads[slot] = thread;
    return thread;
  }

  /** The OS task ids of the running threads (Linux, once each has told it), named as the metrics name them. */
  threadIds(): NamedThread[] {
    const out: NamedThread[] = [];
    this.threads.forEach((t, slot) => { if (t?.tid !== undefined) out.push({ thread: `decisions-${slot}`, tid: t.tid }); });
    return out;
  }

  /** Each running thread's heap in use (collected first where the process runs with --expose-gc), by slot. */
  threadHeapsUsed(): Promise<number[]> {
    return Promise.all(this.threads.filter((t): t is Thread => t !== undefined).map((thread) => thread.heapAsks.ask(thread.worker)));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watch);
    await Promise.all(this.threads.map((t) => t?.worker.terminate()));
  }
}

/**
 * Whether a silent thread spins: its CPU time over the time since the last look is a fifth of the wall time or more
 * (a starved nice thread gets a few hundredths; a spinning one on a loaded machine still a good share of a core). The
 * first look only takes the measure (not spinning yet); a thread whose CPU time cannot be read is taken to spin.
 */
function spinning(thread: Thread, now: number): boolean {
  const cpuMs = thread.tid === undefined ? undefined : threadCpuMs(thread.tid);
  if (cpuMs === undefined) return true;
  const before = thread.cpuAt;
  thread.cpuAt = { ms: now, cpuMs };
  return before !== undefined && now > before.ms && cpuMs - before.cpuMs >= 0.2 * (now - before.ms);
}

function stopped(message: string): AdDecisionResult {
  return { ok: false, error: { reason: 'http', message } };
}
