// What the proxy does while its session store (Redis) is away (issue 27): every playlist is still answered. A break
// that needs a decision plays its content, and that choice is kept (in this process, then in the store when it is
// back) so the session numbers its playlists the same way on every later reload.
import type { AvailRecord } from '../decide/avail-record.js';
import { growingLru } from '../store/growing-lru.js';
import type { Avail } from '../parse/cue-finder.js';
import type { MediaPlaylist } from '../../media/playlist-scanner.js';
import { rewriteMultivariant } from '../stitch/manifest-rewriter.js';
import type { SsaiMetrics, StoreOperation } from '../metrics.js';
import { isSessionStoreUnavailable, type SessionStore } from '../store/session-store.js';
import { marksFromStored, marksToStored, NO_MARKS, type TrackMarks } from './track-marks.js';

/** Seconds an open break without a planned duration is assumed to last (the planner's default). */
const OPEN_AVAIL_SECONDS = 30;

export const STORE_UNAVAILABLE_ERROR = 'store unavailable: the break plays its content';

/**
 * The record of a break decided without the store: no ads, so it stitches nothing and the content plays (as a late
 * decision without slate does). `index` is the break's place among the session's decisions known here.
 */
export function contentRecord(avail: Avail, index: number, targetDuration: number): AvailRecord {
  const duration = avail.insert ? 0 : avail.durationFromCue || !avail.open ? avail.duration : Math.max(avail.duration, OPEN_AVAIL_SECONDS);
  const record: AvailRecord = {
    id: avail.id, index, startSegmentIndex: avail.startSegmentIndex, endSegmentIndex: avail.startSegmentIndex,
    duration, slotDuration: avail.slotDuration > 0 ? avail.slotDuration : targetDuration, ads: [], skipped: [], error: STORE_UNAVAILABLE_ERROR,
  };
  if (avail.startPdtMs !== undefined) record.startPdtMs = avail.startPdtMs;
  if (avail.insert) record.insert = true;
  if (avail.contentOffsetSeconds !== undefined) record.contentOffsetSeconds = avail.contentOffsetSeconds;
  return record;
}

/**
 * The origin's own multivariant playlist with every URI absolute: a viewer whose session cannot be stored plays the
 * origin directly (content, the origin's numbering) rather than a session no other proxy could read.
 */
export function originMultivariant(text: string, originUrl: string, media: MediaPlaylist | undefined): string | undefined {
  if (media) return `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000000\n${originUrl}\n`;
  const rewritten = rewriteMultivariant(text, { originUrl, makeVariantUri: (_n, _kind, absolute) => absolute });
  return rewritten.error ? undefined : rewritten.text;
}

/**
 * The proxy's answers without its store: each use counted in ssai_store_unavailable_total, and the one value kept
 * here for the purpose (the absorbed discontinuities of sessions' tracks, so their numbering holds meanwhile).
 */
export class StoreFallbacks {
  /**
   * Each session track's marks (its breaks' starts, absorbed discontinuities) as last read or written here, so its
   * numbering holds while a shared store is away. Growing: lru-cache given `max` allocates every slot up front.
   */
  private readonly observedHere = growingLru<string, TrackMarks>(100_000);

  /** Only a shared store can be away (it says so with `available`): an in-process one needs no copy here. */
  private readonly keepsCopies: boolean;

  constructor(private readonly store: SessionStore, private readonly metrics: Pick<SsaiMetrics, 'storeUnavailable'>, private readonly ttlMs: number) {
    this.keepsCopies = store.available !== undefined;
  }

  count(operation: StoreOperation): void {
    this.metrics.storeUnavailable.inc({ operation });
  }

  /** `work`'s answer, or `fallback` (counted as `operation`) when the store is away; other failures pass through. */
  or<T>(work: Promise<T>, fallback: T, operation?: StoreOperation): Promise<T> {
    // (one promise, not an async function's own and its await: the hot path asks this several times a reload)
    return work.catch((e: unknown) => {
      if (!isSessionStoreUnavailable(e)) throw e;
      if (operation) this.count(operation);
      return fallback;
    });
  }

  /** observed() without a wait, where the store holds its values in this process; else undefined (ask observed()). */
  observedNow(key: string): TrackMarks | undefined {
    if (!this.store.getNow) return undefined;
    const stored = this.store.getNow<unknown>(key);
    return stored === undefined || stored === null ? NO_MARKS : marksFromStored(stored);
  }

  /** A session track's marks (track-marks.ts): from the store, or while it is away as last known here. */
  async observed(key: string): Promise<TrackMarks> {
    const stored = await this.or(this.store.get<unknown>(key), null, 'read');
    if (stored === null) return this.observedHere.get(key) ?? NO_MARKS;
    if (stored === undefined) return NO_MARKS;
    const marks = marksFromStored(stored);
    if (this.keepsCopies && marks.size) this.observedHere.set(key, marks);
    return marks;
  }

  async keepObserved(key: string, marks: TrackMarks): Promise<void> {
    if (this.keepsCopies) this.observedHere.set(key, marks);
    await this.or(this.store.set(key, marksToStored(marks), this.ttlMs), undefined, 'write');
  }
}
