// Server-side VAST beacons (issue 5 "Tracking"): each event fires exactly once per session/avail/ad, from a queue
// with retries and a timeout, never on the playlist's or the segment redirect's critical path.
import { Agent, request, type Dispatcher } from 'undici';
import { growingLru } from '../store/growing-lru.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';

export interface BeaconOptions {
  timeoutMs?: number;
  retries?: number;
  concurrency?: number;
  /** how long a "fired" mark is kept, ms */
  markTtlMs?: number;
  onResult?: (result: 'sent' | 'failed' | 'duplicate') => void;
  /** a mark was kept in this process only: the store was away (issue 27) */
  onStoreUnavailable?: () => void;
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

/** Events per store value: a mark set is one 31-bit value (store markOnce); event n of a set lives in its value n / 31. */
const BITS_PER_MARK = 31;

/** The store key (without its `beacon:` prefix) and bit of event `event` of the mark set `markKey`. */
export function markBit(markKey: string, event: number): { key: string; bit: number } {
  const chunk = Math.floor(event / BITS_PER_MARK);
  return { key: chunk ? `${markKey}:${chunk}` : markKey, bit: event % BITS_PER_MARK };
}

/** The store keys (without their `beacon:` prefix) of a mark set of `events` events. */
export function markKeysOf(markKey: string, events: number): string[] {
  const out: string[] = [];
  for (let chunk = 0; chunk * BITS_PER_MARK < Math.max(1, events); chunk++) out.push(chunk ? `${markKey}:${chunk}` : markKey);
  return out;
}

export class BeaconSender {
  private readonly queue = new JobQueue();
  private running = 0;
  private readonly waiters: Array<() => void> = [];
  private pendingMarks = 0;
  private closed = false;
  /** scheduled retries, cleared on close */
  private readonly retries = new Set<NodeJS.Timeout>();
  private readonly agent: Agent;
  /**
   * Answer bodies being read, with the time they must be done by. The agent's bodyTimeout is the gap between two
   * chunks: a tracker that sends a byte now and then (slowloris) would hold a beacon slot for ever (issue 32 item 6).
   * One sweep for all of them, not a timer per beacon (see the constructor).
   */
  private readonly reading = new Map<Dispatcher.ResponseData['body'], number>();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly concurrency: number;
  private readonly markTtlMs: number;
  /** marks kept here while the store is away; empty otherwise */
  /** (filled only while the store is away: growing, so it costs nothing the rest of the time) */
  private readonly firedHere = growingLru<string, true>(100_000);

  constructor(private readonly store: SessionStore, private readonly opts: BeaconOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.maxRetries = opts.retries ?? 2;
    this.concurrency = opts.concurrency ?? 16;
    this.markTtlMs = opts.markTtlMs ?? 6 * 3_600_000;
    // The agent's own timeouts bound each beacon (connect, headers, body): no AbortSignal.timeout per request, whose
    // timer and registry entry cost each of thousands of beacons a second at 10,000 viewers.
    this.agent = new Agent({ headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs, connect: { timeout: this.timeoutMs }, connections: 32 });
  }

  /**
   * Forgets the marks of events that can no longer fire (a retired break has no beacons left): kept, they would stay
   * with the session for markTtlMs, ~12 per break per viewer (issue 19 point 4, memory of long sessions).
   */
  forget(markKeys: readonly string[]): Promise<void> {
    return this.store.delete(markKeys.map((k) => `beacon:${k}`));
  }

  /**
   * Fires `urls` once for event `event` of the mark set `markKey` (a break's events: one value per break and viewer,
   * see markBit) across every instance sharing the store; returns at once.
   */
  fire(markKey: string, event: number, urls: readonly string[]): void {
    if (this.closed || !urls.length) return;
    this.pendingMarks++;
    const { key, bit } = markBit(markKey, event);
    this.store.markOnce(`beacon:${key}`, bit, this.markTtlMs).then((created) => created, (e: unknown) => {
      if (!isSessionStoreUnavailable(e)) throw e;
      // The store away (issue 27): de-duplicated in this process only; a player fetches each segment once, so the
      // event still fires once unless a retry lands on another proxy.
      this.opts.onStoreUnavailable?.();
      const here = `${key}#${bit}`;
      if (this.firedHere.has(here)) return false;
      this.firedHere.set(here, true);
      return true;
    }).then((created) => {
      if (!created) { this.opts.onResult?.('duplicate'); return; }
      for (const url of urls) this.queue.push({ url, attempt: 0 });
      this.pump();
    }, () => this.opts.onResult?.('failed')).finally(() => { this.pendingMarks--; this.settle(); });
  }

  /**
   * Sends `urls` once, without a mark: for a caller that already does its work once (a decision's VAST errors: one
   * decision per session and break, under the store's lock). Queued with the beacons, retried as they are.
   */
  sendOnce(urls: readonly string[]): void {
    if (this.closed || !urls.length) return;
    for (const url of urls) this.queue.push({ url, attempt: 0 });
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.running < this.concurrency && this.queue.length) {
      const job = this.queue.shift()!;
      this.running++;
      void this.send(job).finally(() => { this.running--; this.pump(); this.settle(); });
    }
  }

  private async send(job: Job): Promise<void> {
    try {
      const res = await request(job.url, { dispatcher: this.agent });
      this.watch(res.body);
      await res.body.dump().catch(() => undefined);
      this.reading.delete(res.body);
      if (res.statusCode >= 500 && job.attempt < this.maxRetries) return this.retry(job);
      this.opts.onResult?.(res.statusCode < 400 ? 'sent' : 'failed');
    } catch {
      if (job.attempt < this.maxRetries) return this.retry(job);
      this.opts.onResult?.('failed');
    }
  }

  /** Cuts body once it has been read for longer than the beacon timeout (a quarter of it late at most). */
  private watch(body: Dispatcher.ResponseData['body']): void {
    this.reading.set(body, Date.now() + this.timeoutMs);
    this.sweeper ??= setInterval(() => {
      const now = Date.now();
      for (const [b, by] of this.reading) if (by <= now) { this.reading.delete(b); b.destroy(); }
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
    if (this.running === 0 && this.queue.length === 0 && this.pendingMarks === 0) for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves when nothing is queued or in flight (tests). */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0 && this.pendingMarks === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    for (const timer of this.retries) clearTimeout(timer);
    this.running -= this.retries.size;
    this.retries.clear();
    clearInterval(this.sweeper);
    for (const body of this.reading.keys()) body.destroy();
    this.reading.clear();
    this.settle();
    await this.agent.close().catch(() => undefined);
  }
}
