// Beacons on their own thread (issue 28 point 2): at 10,000 viewers fetching their ad segments the engine sends
// ~1,700 beacons a second, and each outgoing request costs the thread that sends it about what answering a playlist
// does. Sent from a worker thread, they leave the playlists' event loop to the playlists; only the URLs cross (in
// batches, one message per turn of the event loop) and the counts of results come back.
import { Worker } from 'node:worker_threads';
import { batchedSender } from '../decide/message-batch.js';
import type { BeaconDispatchOptions, BeaconResult, BeaconTransport } from './beacon-dispatch.js';

const ENTRY = new URL('./beacon-thread-entry.mjs', import.meta.url);

export interface BeaconThreadOptions extends Omit<BeaconDispatchOptions, 'onResult' | 'onSettled'> {
  /** results as they come back, counted */
  onResult: (result: BeaconResult, count: number) => void;
  /** after results came back: `pending` went down */
  onSettled?: () => void;
  /** the thread's module (tests) */
  entry?: URL;
}

export class BeaconThread implements BeaconTransport {
  private worker: Worker | undefined;
  private post: ((url: string) => void) | undefined;
  private outstanding = 0;
  private closed = false;

  constructor(private readonly opts: BeaconThreadOptions) {}

  get pending(): number {
    return this.outstanding;
  }

  send(url: string): void {
    if (this.closed) return;
    if (!this.post) this.spawn();
    this.outstanding++;
    this.post!(url);
  }

  /** Started with the first beacon: an engine that fires none runs no thread. */
  private spawn(): void {
    const { timeoutMs, retries, concurrency } = this.opts;
    const dispatch = { timeoutMs, retries, concurrency };
    const worker = new Worker(this.opts.entry ?? ENTRY, { workerData: dispatch });
    worker.unref(); // the engine's close ends it
    this.worker = worker;
    this.post = batchedSender((batch: string[]) => worker.postMessage(batch));
    worker.on('message', (m: { sent: number; failed: number }) => {
      this.outstanding -= m.sent + m.failed;
      if (m.sent) this.opts.onResult('sent', m.sent);
      if (m.failed) this.opts.onResult('failed', m.failed);
      this.opts.onSettled?.();
    });
    const lost = (): void => {
      if (this.worker !== worker) return;
      // what it held is counted failed; the next beacon starts a new thread
      this.worker = undefined;
      this.post = undefined;
      const held = this.outstanding;
      this.outstanding = 0;
      if (held) this.opts.onResult('failed', held);
      this.opts.onSettled?.();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    this.post = undefined;
    await worker?.terminate();
  }
}
