// Server-side VAST beacons (issue 5 "Tracking"): each event fires exactly once per session/avail/ad, handed to a
// delivery (beacon-delivery.ts: a queue with retries and a timeout, in this process or on the beacon thread), never on
// the playlist's or the segment redirect's critical path.
import { BeaconDelivery, type BeaconDeliveryOptions, type BeaconItem, type BeaconTransport } from './beacon-delivery.js';
import { growingLru } from '../store/growing-lru.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';

export interface BeaconOptions extends BeaconDeliveryOptions {
  /** how long a "fired" mark is kept, ms */
  markTtlMs?: number;
  onResult?: (result: 'sent' | 'failed' | 'duplicate') => void;
  /** a mark was kept in this process only: the store was away (issue 27) */
  onStoreUnavailable?: () => void;
  /**
   * where the URLs go (the beacon thread, beacon-thread.ts, which reports to onResult itself); default: a
   * BeaconDelivery in this process with these options
   */
  transport?: BeaconTransport;
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
  private readonly delivery: BeaconTransport;
  private pendingMarks = 0;
  private readonly waiters: Array<() => void> = [];
  private closed = false;
  private readonly markTtlMs: number;
  /** marks kept here while the store is away; empty otherwise */
  /** (filled only while the store is away: growing, so it costs nothing the rest of the time) */
  private readonly firedHere = growingLru<string, true>(100_000);

  constructor(private readonly store: SessionStore, private readonly opts: BeaconOptions = {}) {
    this.markTtlMs = opts.markTtlMs ?? 6 * 3_600_000;
    this.delivery = opts.transport ?? new BeaconDelivery(opts, (result) => opts.onResult?.(result));
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
   * see markBit) across every instance sharing the store; returns at once. `urls` may hold the event's URLs still
   * packed (PackedEvent): they are unpacked where they are sent.
   */
  fire(markKey: string, event: number, urls: readonly BeaconItem[]): void {
    if (this.closed || !urls.length) return;
    const { key, bit } = markBit(markKey, event);
    if (this.store.markOnceNow) {
      // an in-process store: marked now, no promise chain per beacon
      if (this.store.markOnceNow(`beacon:${key}`, bit, this.markTtlMs)) this.delivery.send(urls);
      else this.opts.onResult?.('duplicate');
      return;
    }
    this.pendingMarks++;
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
      if (!this.closed) this.delivery.send(urls);
    }, () => this.opts.onResult?.('failed')).finally(() => { this.pendingMarks--; this.settle(); });
  }

  /**
   * Sends `urls` once, without a mark: for a caller that already does its work once (a decision's VAST errors: one
   * decision per session and break, under the store's lock). Queued with the beacons, retried as they are.
   */
  sendOnce(urls: readonly string[]): void {
    if (this.closed || !urls.length) return;
    this.delivery.send(urls);
  }

  private settle(): void {
    if (this.pendingMarks === 0) for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves when nothing is marked, queued or in flight (tests). */
  async idle(): Promise<void> {
    if (this.pendingMarks > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
    await this.delivery.idle();
  }

  /** The heap of the beacon thread, when they go out on one (benchmarks count it with the process's). */
  threadHeapUsed(): Promise<number> {
    return this.delivery.threadHeapUsed?.() ?? Promise.resolve(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.delivery.close();
  }
}
