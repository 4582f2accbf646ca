// The heap of a proxy worker thread (decision threads, the beacon thread), asked of it by message: nodejs_heap_* and
// process.memoryUsage() count only the main thread's (ssai_thread_heap_used_bytes, the benchmarks' bytes per viewer).
import { getHeapStatistics } from 'node:v8';
import type { MessagePort, Worker } from 'node:worker_threads';

/** The message a thread's body answers with reportHeap. */
export const HEAP_ASK = 'heap';
export type HeapReport = { heapUsed: number };

/** In a thread's body: posts the heap in use, collected first when the process runs with --expose-gc (the benchmarks). */
export function reportHeap(port: MessagePort): void {
  (globalThis as { gc?: () => void }).gc?.();
  port.postMessage({ heapUsed: getHeapStatistics().used_heap_size } satisfies HeapReport);
}

/** On the main thread, one per thread: the asks waiting for its next report, answered together (one message out). */
export class HeapAsks {
  private readonly waiting: Array<(bytes: number) => void> = [];

  ask(worker: Worker): Promise<number> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (this.waiting.length === 1) worker.postMessage(HEAP_ASK);
    });
  }

  /** The thread reported `bytes`; a lost thread answers 0. */
  answer(bytes: number): void {
    for (const resolve of this.waiting.splice(0)) resolve(bytes);
  }
}
