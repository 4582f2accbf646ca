// The beacon URLs of a decision kept deflated (issue 19 point 4, memory per viewer). With personalised ads every
// viewer's tracking URLs are its own: 7 events × 2 ads of ~100-character URLs held as 28 strings in 28 arrays cost
// ~3 KB per break per viewer, more than the whole budget. They are cold data (read when a beacon fires or the
// tracking JSON is asked for) and very repetitive (one host, one path, the viewer's id in each), so a decision keeps
// them as one deflated string (~270 characters for that break) and they are inflated on use.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type { AvailRecord, PlannedAdRecord } from './avail-record.js';
import type { TrackingEvents } from '../parse/linear-ad.js';

export const NO_TRACKING: TrackingEvents = Object.freeze({
  impression: [], start: [], firstQuartile: [], midpoint: [], thirdQuartile: [], complete: [], error: [],
}) as TrackingEvents;

const EVENT_NAMES = ['impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'error'] as const;

/**
 * Marks a packed string of raw bytes (one character per byte, 0-255) deflated without a dictionary (records stored
 * before the dictionary); one without a mark is base64 (records stored before that). Base64 never holds these.
 */
const BYTES_MARK = '\u0001';
/** Marks raw bytes deflated with TRACKING_DICTIONARY: what is made now. */
const DICTIONARY_MARK = '\u0002';

/**
 * A preset deflate dictionary (RFC 1951 lets both ends agree on text that precedes the input): the JSON skeleton of
 * the events and the words of common beacon URLs. The first event list of a decision then costs references instead of
 * literals: ~190 → ~140 bytes for two ads of 7 events (~65 B per viewer at 10,000, issue 19 point 4). Fixed in code,
 * so any instance inflates what another packed; a change needs a new mark. The commonest parts come last (shortest
 * distances).
 */
const TRACKING_DICTIONARY = Buffer.from([
  '[CACHEBUSTING]', '[TIMESTAMP]', '[ERRORCODE]', '%%CACHEBUSTER%%', '.gif?', 'pixel', 'event=', '&t=', '?e=', 'https://',
  '"]},{"impression":["', '[{"impression":["http://', '"],"start":["http', '"],"firstQuartile":["http', '"],"midpoint":["http',
  '"],"thirdQuartile":["http', '"],"complete":["http', '"],"error":["http', '"]}]', '/track/',
].join(''), 'latin1');
const DEFLATE_OPTIONS = { windowBits: 11, memLevel: 3, dictionary: TRACKING_DICTIONARY } as const;

/**
 * The tracking events of each ad as one string: deflated JSON, one character per byte. V8 keeps such a string at a
 * byte per character, a quarter less than base64 (~70 B per break per viewer); JSON (the Redis store) carries it
 * exactly, escaping the control characters.
 */
export function packTracking(perAd: readonly TrackingEvents[]): string {
  // A 2 KB window and small hash tables: the repeats are between neighbouring URLs, and zlib's default 256 KB of
  // state costs twice the time to set up for a 1-2 KB input (10 vs 20 µs per decision, same size).
  return DICTIONARY_MARK + deflateRawSync(JSON.stringify(perAd), DEFLATE_OPTIONS).toString('latin1');
}

/** The JSON text of a pack, of any of its forms (throws on a broken one). */
function inflated(packed: string): string {
  if (packed.startsWith(DICTIONARY_MARK)) return inflateRawSync(Buffer.from(packed.slice(1), 'latin1'), DEFLATE_OPTIONS).toString('utf8');
  const bytes = packed.startsWith(BYTES_MARK) ? Buffer.from(packed.slice(1), 'latin1') : Buffer.from(packed, 'base64');
  return inflateRawSync(bytes).toString('utf8');
}

/**
 * Unpacked lists, a few: one segment's beacons read their break's lists once (segment-route memoises them per request),
 * and with thousands of viewers each viewer's next beacon comes seconds later, long after a cache of any affordable size
 * has moved on (2,000 lists held ~4 MB for few hits at 6,000 viewers with their segments and beacons).
 */
const unpacked = new LRUCache<string, TrackingEvents[]>({ max: 64 });

/** The packed lists, or undefined when the text is not a packed list (a bug or a foreign record: no beacons then). */
export function unpackTracking(packed: string): TrackingEvents[] | undefined {
  const hit = unpacked.get(packed);
  if (hit) return hit;
  let parsed: unknown;
  try {
    parsed = JSON.parse(inflated(packed));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const lists = parsed.map((x: unknown) => {
    const o = (x && typeof x === 'object' ? x : {}) as Record<string, unknown>;
    const events = {} as TrackingEvents;
    for (const name of EVENT_NAMES) {
      const v = o[name];
      events[name] = Array.isArray(v) ? v.filter((u): u is string => typeof u === 'string') : [];
    }
    return events;
  });
  unpacked.set(packed, lists);
  return lists;
}

/** The tracking events of a record's ad: from the packed string, or from the ad itself (records stored before packing). */
export function trackingOf(record: Pick<AvailRecord, 'ads' | 'tracking'>, adIndex: number): TrackingEvents {
  const ad = record.ads[adIndex];
  if (!ad) return NO_TRACKING;
  if (ad.tracking) return ad.tracking;
  if (record.tracking === undefined) return NO_TRACKING;
  return unpackTracking(record.tracking)?.[adIndex] ?? NO_TRACKING;
}

/** Joins the ad ids kept apart (an id holding it would only lose that character: the playlist strips it anyway). */
const AD_ID_SEPARATOR = '\u0000';

/** The ids of a record's ads, in order: from the ids kept apart, or from the ads themselves (records stored before). */
export function adIdsOf(record: Pick<AvailRecord, 'ads' | 'adIds'>): string[] {
  return record.adIds === undefined ? record.ads.map((a) => a.adId) : record.adIds.split(AD_ID_SEPARATOR);
}

/** The id of one ad of a record (adIdsOf once, where every ad is read). */
export function adIdOf(record: Pick<AvailRecord, 'ads' | 'adIds'>, adIndex: number): string {
  return adIdsOf(record)[adIndex] ?? '';
}

/**
 * The record as it is stored: its ads' ids kept apart in one string, so the ads themselves (creative, duration) are
 * the same for every viewer given the same creatives and stored once (issue 19 point 4: two ad objects and their
 * array, ~180 B per break per viewer); its ads' tracking events moved into one packed string (left out when no ad has any,
 * as a slate-only break). A record whose `tracking` is packed already (by the decision thread, for its first ads in
 * order: ads after them, slate, have none) keeps it.
 */
export function packRecord(record: AvailRecord): AvailRecord {
  const ads: PlannedAdRecord[] = record.ads.map(({ tracking: _t, ...rest }) => ({ ...rest, adId: '' }));
  const adIds = record.adIds ?? record.ads.map((a) => a.adId).join(AD_ID_SEPARATOR);
  if (record.tracking !== undefined) return { ...record, ads, adIds };
  const perAd = record.ads.map((a) => a.tracking ?? NO_TRACKING);
  const any = perAd.some((t) => EVENT_NAMES.some((name) => t[name].length > 0));
  return any ? { ...record, ads, adIds, tracking: packTracking(perAd) } : { ...record, ads, adIds };
}
