// Sending beacon URLs (issue 5 "Tracking"): a first-in first-out queue, a bounded number in flight, retries of a
// tracker's 5xx, and every request bounded in time (connect, headers, a body read in full). No marks here: what to send
// was decided once per event by BeaconSender (beacons.ts). Runs where it is made: in the process, or on the beacon
// thread (beacon-thread.ts), so the HTTP client's work at thousands of beacons a second leaves the playlists' thread.
import { Agent, type Dispatcher } from 'undici';
import { unpackTracking } from '../decide/packed-tracking.js';
import type { TrackingEvents } from '../parse/linear-ad.js';

export type BeaconResult = 'sent' | 'failed';

/**
 * One event's URLs still packed in their record (packed-tracking.ts), unpacked where they are sent: the segment
 * redirect then inflates and parses no tracking on the playlists' thread.
 */
export type PackedEvent = { packed: string; adIndex: number; event: keyof TrackingEvents };
/** A URL to send, or an event's URLs packed. */
export type BeaconItem = string | PackedEvent;

/** The URLs of an item: itself, or its event's URLs unpacked (none when the pack cannot be read). */
export function urlsOf(item: BeaconItem): readonly string[] {
  return typeof item === 'string' ? [item] : unpackTracking(item.packed)?.[item.adIndex]?.[item.event] ?? [];
}

export interface BeaconDeliveryOptions {
  timeoutMs?: number;
  retries?: number;
  concurrency?: number;
}

/** Where BeaconSender hands the URLs of an event it won: this process's BeaconDelivery, or the beacon thread. */
export interface BeaconTransport {
  send(items: readonly BeaconItem[]): void;
  /** resolves when nothing is queued or in flight, every result reported */
  idle(): Promise<void>;
  close(): Promise<void>;
  /** the heap a thread of its own uses, collected first where it can be (benchmarks count it with the process's) */
  threadHeapUsed?(): Promise<number>;
}

type Job = { url: string; attempt: number };

/**
 * First in, first out, with a read index: Array.shift() moves the whole array once it is large (V8 trims only small
 * arrays in place), and at 10,000 viewers the beacons of a break queue by the thousands (seen as the queue's pump
 * leading a CPU profile).
 */
class JobQueue {
  private items: Job[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(job: Job): void {
    this.items.push(job);
  }
  shift(): Job | undefined {
    if (this.head >= this.items.length) return undefined;
    const job = this.items[this.head]!;
    this.items[this.head++] = undefined as unknown as Job; // let it go
    if (this.head === this.items.length) { this.items = []; this.head = 0; } else if (this.head >= 4096 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return job;
  }
  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

/** The beacons of this process, sent from its event loop; `onResult` is told how each URL ended. */
export class BeaconDelivery implements BeaconTransport {
  private readonly queue = new JobQueue();
  private running = 0;
  private pumping = false;
  private readonly waiters: Array<() => void> = [];
  private closed = false;
  /** scheduled retries, cleared on close */
  private readonly retries = new Set<NodeJS.Timeout>();
  private readonly agent: Agent;
  /**
   * Answer bodies being read, with the time they must be done by. The agent's bodyTimeout is the gap between two
   * chunks: a tracker that sends a byte now and then (slowloris) would hold a beacon slot for ever (issue 32 item 6).
   * One sweep for all of them, not a timer per beacon (see the constructor).
   */
  private readonly reading = new Map<Dispatcher.DispatchController, number>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly concurrency: number;

  constructor(opts: BeaconDeliveryOptions = {}, private readonly onResult: (result: BeaconResult) => void = () => undefined) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.maxRetries = opts.retries ?? 2;
    this.concurrency = opts.concurrency ?? 16;
    // The agent's own timeouts bound each beacon (connect, headers, body): no AbortSignal.timeout per request, whose
    // timer and registry entry cost each of thousands of beacons a second at 10,000 viewers.
    this.agent = new Agent({ headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs, connect: { timeout: this.timeoutMs }, connections: 32 });
  }

  /** Queues the items' URLs; returns how many there are. */
  send(items: readonly BeaconItem[]): number {
    if (this.closed) return 0;
    let n = 0;
    for (const item of items) {
      const urls = urlsOf(item);
      for (const url of urls) this.queue.push({ url, attempt: 0 });
      n += urls.length;
    }
    this.pump();
    return n;
  }

  private pump(): void {
    // (a beacon that ends at once, a malformed URL, calls back into pump: the loop below goes on instead)
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closed && this.running < this.concurrency && this.queue.length) {
        const job = this.queue.shift()!;
        this.running++;
        this.deliver(job, () => { this.running--; this.pump(); this.settle(); });
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * One GET through the agent's dispatch with a handler that drops the body: no body stream and no promise per beacon,
   * as request() makes (about half of a beacon's CPU on this thread, bench/beacons.ts). `done` is called once.
   */
  private deliver(job: Job, done: () => void): void {
    let url: URL;
    try {
      url = new URL(job.url);
    } catch {
      this.onResult('failed');
      done();
      return;
    }
    let status = 0;
    let controller: Dispatcher.DispatchController | undefined;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      if (controller) this.reading.delete(controller);
      // A 5xx or no answer is retried; an answer whose body was cut still reached the tracker (no retry).
      if ((status === 0 || status >= 500) && job.attempt < this.maxRetries) this.retry(job);
      else this.onResult(status > 0 && status < 400 ? 'sent' : 'failed');
      done();
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (c) => { controller = c; },
      onResponseStart: (c, statusCode) => {
        status = statusCode;
        this.watch(c);
      },
      onResponseData: () => undefined,
      onResponseEnd: finish,
      onResponseError: finish,
    };
    try {
      this.agent.dispatch({ origin: url.origin, path: `${url.pathname}${url.search}`, method: 'GET' }, handler);
    } catch {
      finish();
    }
  }

  /** Cuts the answer once its body has been read for longer than the beacon timeout (a quarter of it late at most). */
  private watch(controller: Dispatcher.DispatchController): void {
    this.reading.set(controller, Date.now() + this.timeoutMs);
    this.sweeper ??= setInterval(() => {
      const now = Date.now();
      for (const [c, by] of this.reading) if (by <= now) { this.reading.delete(c); c.abort(new Error('the tracker sent its answer too slowly')); }
      if (!this.reading.size) { clearInterval(this.sweeper); this.sweeper = undefined; }
    }, Math.max(50, this.timeoutMs / 4));
    this.sweeper.unref();
  }

  private retry(job: Job): void {
    if (this.closed) return;
    const delay = 200 * 2 ** job.attempt;
    this.running++; // a scheduled retry counts as work in progress for idle()
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.running--;
      this.queue.push({ url: job.url, attempt: job.attempt + 1 });
      this.pump();
      this.settle();
    }, delay);
    timer.unref();
    this.retries.add(timer);
  }

  private settle(): void {
    if (this.running === 0 && this.queue.length === 0) for (const w of this.waiters.splice(0)) w();
  }

  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    for (const timer of this.retries) clearTimeout(timer);
    this.running -= this.retries.size;
    this.retries.clear();
    clearInterval(this.sweeper);
    for (const c of this.reading.keys()) c.abort(new Error('the beacons are closed'));
    this.reading.clear();
    this.settle();
    await this.agent.close().catch(() => undefined);
  }
}
