// Beacons on a worker thread (issue 28 point 2): at 10,000 viewers a break's beacons are thousands of HTTP requests a
// second, and the HTTP client's work for them (sockets, parsing, promises) ran on the thread that answers playlists.
// Here only the URLs cross, batched per turn of the event loop; the thread sends them (beacon-delivery.ts) at a lower
// priority and reports how they ended. The marks that make each event fire once stay on the main thread with the store.
import { Worker } from 'node:worker_threads';
import { batchedSender } from '../decide/message-batch.js';
import { HeapAsks, type HeapReport } from '../decide/thread-heap.js';
import type { NamedThread } from '../decide/thread-times.js';
import type { BeaconDeliveryOptions, BeaconItem, BeaconResult, BeaconTransport } from './beacon-delivery.js';

/**
 * What the thread posts: how many URLs ended each way since its last report, and `more`, how many more URLs than
 * items it was sent meanwhile (a packed event is one item and any number of URLs, none included).
 */
export type BeaconThreadReport = Record<BeaconResult, number> & { more: number };

const ENTRY = new URL('./beacon-thread-entry.mjs', import.meta.url);

export class ThreadedBeaconDelivery implements BeaconTransport {
  /** `outstanding`: items and URLs sent to the thread and not yet reported done (see BeaconThreadReport) */
  private thread: { worker: Worker; send: (items: readonly BeaconItem[]) => void; outstanding: number; tid?: number } | undefined;
  private readonly waiters: Array<() => void> = [];
  private readonly heapAsks = new HeapAsks();
  private closed = false;

  constructor(private readonly options: BeaconDeliveryOptions & {
    /** how much nicer than the process the thread runs (Linux, thread-priority.ts) */
    nice?: number;
    onResult?: (result: BeaconResult, count: number) => void;
    /** the thread ended (a crash): its URLs not yet reported are counted failed, the next beacon starts a new one */
    onLost?: (error: string, urls: number) => void;
  } = {}) {}

  send(items: readonly BeaconItem[]): void {
    if (this.closed || !items.length) return;
    const thread = this.thread ?? this.spawn();
    thread.outstanding += items.length;
    thread.send(items);
  }

  /** Started with the first beacon: an engine whose viewers reach no ad runs no thread. */
  private spawn(): NonNullable<ThreadedBeaconDelivery['thread']> {
    const { nice, onResult: _onResult, onLost: _onLost, ...delivery } = this.options;
    const worker = new Worker(ENTRY, { workerData: { ...delivery, nice: nice ?? 0 }, resourceLimits: { maxYoungGenerationSizeMb: 48 } });
    worker.unref(); // the engine's close terminates it
    // the URLs of one turn as one message (a message costs a clone and a wake-up of the thread)
    const post = batchedSender<readonly BeaconItem[]>((batch) => worker.postMessage(batch.flat()));
    const thread: NonNullable<ThreadedBeaconDelivery['thread']> = { worker, send: post, outstanding: 0 };
    worker.on('message', (report: BeaconThreadReport | HeapReport | { tid: number }) => {
      if ('tid' in report) {
        thread.tid = report.tid;
        return;
      }
      if ('heapUsed' in report) {
        this.heapAsks.answer(report.heapUsed);
        return;
      }
      // (the expansion with the results: the URLs reported done may be the ones it added)
      thread.outstanding += report.more - report.sent - report.failed;
      for (const result of ['sent', 'failed'] as const) if (report[result]) this.options.onResult?.(result, report[result]);
      this.wakeIfIdle();
    });
    const lost = (why: string) => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      const unreported = thread.outstanding;
      if (unreported && !this.closed) {
        this.options.onResult?.('failed', unreported);
        this.options.onLost?.(why, unreported);
      }
      thread.outstanding = 0;
      this.wakeIfIdle();
      this.heapAsks.answer(0);
    };
    worker.on('error', (e) => lost(`the beacon thread failed: ${e.message}`));
    worker.on('exit', (code) => lost(`the beacon thread ended (exit code ${code})`));
    this.thread = thread;
    return thread;
  }

  /** Nothing sent to a thread is unreported: no thread, or the one there has reported everything. */
  private get isIdle(): boolean {
    return !this.thread || this.thread.outstanding <= 0;
  }

  private wakeIfIdle(): void {
    if (this.isIdle) for (const w of this.waiters.splice(0)) w();
  }

  /** The thread's OS task id (Linux, once it has told it), named as the metrics name it. */
  threadIds(): NamedThread[] {
    const tid = this.thread?.tid;
    return tid === undefined ? [] : [{ thread: 'beacons', tid }];
  }

  /** The heap the thread uses after a collection (0 before it started): benchmarks count it with the process's. */
  threadHeapUsed(): Promise<number> {
    const thread = this.thread;
    if (!thread) return Promise.resolve(0);
    return this.heapAsks.ask(thread.worker);
  }

  idle(): Promise<void> {
    if (this.isIdle) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    const thread = this.thread;
    await thread?.worker.terminate();
    // what it held is dropped, as the in-process delivery drops its queue on close
    if (this.thread === thread) this.thread = undefined;
    for (const w of this.waiters.splice(0)) w();
  }
}
