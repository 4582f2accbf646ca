// Sending beacon URLs (issue 5 "Tracking"): a queue with a bounded number in flight, retries of 5xx answers and
// failed connections, and the agent's own timeouts. It runs on a beacon thread (beacon-thread.ts) or, with the
// threads off, on the main thread; which events fire and once is decided before, by BeaconSender's marks.
import { Agent, request } from 'undici';

export type BeaconResult = 'sent' | 'failed';

export interface BeaconDispatchOptions {
  timeoutMs: number;
  retries: number;
  concurrency: number;
  /** a URL's final result (after its retries) */
  onResult: (result: BeaconResult) => void;
  /** after a URL's attempt ended: `pending` may have changed */
  onSettled?: () => void;
}

/** What sends beacon URLs for BeaconSender: in this thread (BeaconDispatch) or on a beacon thread (BeaconThread). */
export interface BeaconTransport {
  send(url: string): void;
  /** URLs given and not yet sent or given up */
  readonly pending: number;
  close(): Promise<void>;
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

export class BeaconDispatch implements BeaconTransport {
  private readonly queue = new JobQueue();
  private running = 0;
  private closed = false;
  /** scheduled retries, cleared on close */
  private readonly retries = new Set<NodeJS.Timeout>();
  private readonly agent: Agent;

  constructor(private readonly opts: BeaconDispatchOptions) {
    // The agent's own timeouts bound each beacon (connect, headers, body): no AbortSignal.timeout per request, whose
    // timer and registry entry cost each of thousands of beacons a second at 10,000 viewers.
    this.agent = new Agent({ headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs, connect: { timeout: opts.timeoutMs }, connections: 32 });
  }

  get pending(): number {
    return this.running + this.queue.length;
  }

  send(url: string): void {
    if (this.closed) return;
    this.queue.push({ url, attempt: 0 });
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.running < this.opts.concurrency && this.queue.length) {
      const job = this.queue.shift()!;
      this.running++;
      void this.attempt(job).finally(() => { this.running--; this.pump(); this.opts.onSettled?.(); });
    }
  }

  private async attempt(job: Job): Promise<void> {
    try {
      const res = await request(job.url, { dispatcher: this.agent });
      await res.body.dump().catch(() => undefined);
      if (res.statusCode >= 500 && job.attempt < this.opts.retries) return this.retry(job);
      this.opts.onResult(res.statusCode < 400 ? 'sent' : 'failed');
    } catch {
      if (job.attempt < this.opts.retries) return this.retry(job);
      this.opts.onResult('failed');
    }
  }

  private retry(job: Job): void {
    if (this.closed) return;
    const delay = 200 * 2 ** job.attempt;
    this.running++; // a scheduled retry is work in progress
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.running--;
      this.queue.push({ url: job.url, attempt: job.attempt + 1 });
      this.pump();
      this.opts.onSettled?.();
    }, delay);
    timer.unref();
    this.retries.add(timer);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    for (const timer of this.retries) clearTimeout(timer);
    this.running -= this.retries.size;
    this.retries.clear();
    await this.agent.close().catch(() => undefined);
  }
}
