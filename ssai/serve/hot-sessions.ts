// The sessions and their decided avails as the hot path keeps them in this process (issue 5 "Playback"): read from
// the store once, the store staying the source of truth.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { keys, retired, type AvailRecord, type ContentRung, type SessionRecord } from '../decide/avail-record.js';
import { ssaiError, type SsaiError } from '../errors.js';
import type { VariantEntry } from '../stitch/manifest-rewriter.js';
import { exactArray, type SessionStore } from '../store/session-store.js';
import { growingLru } from '../store/growing-lru.js';
import type { Avail } from '../parse/cue-finder.js';
import { contentRecord } from './store-outage.js';
import type { PastHolder, TrackPast } from './past-breaks.js';

/**
 * The session as stored: its variants and rungs (the same for every viewer of one origin playlist) are kept once
 * under a layout key shared by those sessions; the session holds the key.
 */
type LayoutSession = Omit<SessionRecord, 'variants' | 'rungs'> & { layout: string };
type StoredSession = LayoutSession | SessionRecord;
export type Layout = { variants: VariantEntry[]; rungs: ContentRung[] };
const layoutKey = (hash: string) => `layout:${hash}`;

/** What the hot path keeps of a session in this process: immutable once read (decisions never change). */
export interface HotSession extends PastHolder {
  readonly session: SessionRecord;
  records: AvailRecord[];
}

/**
 * A cached session: the store's frozen copy and its shared layout read through as the SessionRecord, with the
 * decisions. One object of three fields per viewer instead of a rebuilt session and a wrapper (~90 B, issue 19
 * point 4).
 */
class CachedSession implements HotSession, SessionRecord {
  /** its tracks' past breaks, summed (past-breaks.ts) */
  pastBreaks?: Array<TrackPast | undefined>;
  constructor(private readonly stored: Omit<SessionRecord, 'variants' | 'rungs'>, private readonly layout: Layout, public records: AvailRecord[]) {}
  get session(): SessionRecord {
    return this;
  }
  get id(): string {
    return this.stored.id;
  }
  get guid(): string {
    return this.stored.guid;
  }
  get origin(): string {
    return this.stored.origin;
  }
  get variants(): VariantEntry[] {
    return this.layout.variants;
  }
  get rungs(): ContentRung[] {
    return this.layout.rungs;
  }
  get playerParams(): Record<string, string> {
    return this.stored.playerParams;
  }
  get createdAt(): number {
    return this.stored.createdAt;
  }
  get userAgent(): string | undefined {
    return this.stored.userAgent;
  }
  get clientIp(): string | undefined {
    return this.stored.clientIp;
  }
  get mode(): SessionRecord['mode'] {
    return this.stored.mode;
  }
  get debug(): SessionRecord['debug'] {
    return this.stored.debug;
  }
}

export class HotSessions {
  /** sessions and their decided avails, read from the store once per process (the store stays the source of truth) */
  private readonly hot: LRUCache<string, HotSession>;
  private readonly layouts = new LRUCache<string, Layout>({ max: 1000 });
  /**
   * breaks being retired by this process, by session and break (a request that sees one again meanwhile leaves it);
   * not by record object: the store may hand several sessions the same frozen record
   */
  private readonly retiring = new Set<string>();
  /**
   * The layout of each configuration's sessions seen here, or '' once two differ: while the store is away, a
   * session unknown here plays its configuration's content when that has one layout (issue 27).
   */
  private readonly layoutOfGuid = growingLru<string, string>(10_000);
  /** breaks decided without the store (content), by avail key: written to the store when it is back */
  private readonly unsaved = new Map<string, { hot: HotSession; record: AvailRecord }>();
  private flushing: Promise<void> | undefined;

  constructor(private readonly store: SessionStore, private readonly sessionTtlMs: number) {
    this.hot = growingLru(100_000, { ttl: sessionTtlMs });
  }

  private noteLayout(guid: string, hash: string): void {
    const known = this.layoutOfGuid.get(guid);
    if (known === undefined) this.layoutOfGuid.set(guid, hash);
    else if (known !== '' && known !== hash) this.layoutOfGuid.set(guid, '');
  }

  /** The one layout of this configuration's sessions seen here, if there is exactly one. */
  layoutOf(guid: string): Layout | undefined {
    const hash = this.layoutOfGuid.get(guid);
    return hash ? this.layouts.get(hash) : undefined;
  }

  /**
   * The store is away and the break needs a decision: it plays its content, in this process now and, once the store
   * is back, in every process (flushUnsaved), so the session's numbering never changes under a viewer.
   */
  degrade(hot: HotSession, avail: Avail, targetDuration: number): AvailRecord {
    const known = hot.records.find((r) => r.id === avail.id);
    if (known) return known;
    const record = contentRecord(avail, hot.records.length, targetDuration);
    mergeRecords(hot, [record]);
    this.unsaved.set(keys.avail(hot.session.id, record.id), { hot, record });
    return record;
  }

  /** Whether breaks decided without the store wait to be written to it. */
  get hasUnsaved(): boolean {
    return this.unsaved.size > 0;
  }

  /**
   * Writes the breaks decided without the store, once it answers again. A break another process decided meanwhile
   * keeps that decision (the store's), here too: every process then stitches the same.
   */
  flushUnsaved(): Promise<void> {
    this.flushing ??= (async () => {
      for (const [key, { hot, record }] of this.unsaved) {
        const sid = hot.session.id;
        await this.store.push(keys.availList(sid), record.id, this.sessionTtlMs);
        const stored = await this.store.setIfAbsent(key, record, this.sessionTtlMs);
        this.unsaved.delete(key);
        if (stored.created) continue;
        const at = hot.records.findIndex((r) => r.id === record.id);
        if (at >= 0) hot.records[at] = stored.value;
      }
    })().finally(() => { this.flushing = undefined; });
    return this.flushing;
  }

  /** Stores a new session and its layout, then caches it from the stored copies. */
  async save(session: SessionRecord, layout: Layout): Promise<void> {
    const sid = session.id;
    const hash = createHash('sha1').update(JSON.stringify(layout)).digest('base64url');
    const stored: StoredSession = { id: sid, guid: session.guid, origin: session.origin, layout: hash, playerParams: session.playerParams, ...(session.mode ? { mode: session.mode } : {}), ...(session.debug ? { debug: true as const } : {}),
      ...(session.userAgent !== undefined ? { userAgent: session.userAgent } : {}), ...(session.clientIp !== undefined ? { clientIp: session.clientIp } : {}), createdAt: session.createdAt };
    // The layout is written with every session (refreshing its TTL), so it outlives each session that names it.
    await this.store.set(layoutKey(hash), layout, this.sessionTtlMs);
    await this.store.set(keys.session(sid), stored, this.sessionTtlMs);
    // (the layout is cached by get() from the store's copy, shared by every session of the origin: this object holds
    // strings sliced from the origin's text, and caching it per save gave each viewer a layout of its own)
    this.noteLayout(session.guid, hash);
    this.hot.delete(sid);
    await this.get(sid); // cached from the stored copies: compact, layout shared with the other sessions
  }

  /** The session from this process's cache, else from the store (then cached: a session never changes). */
  async get(sid: string): Promise<HotSession | undefined> {
    if (!sid) return undefined;
    const cached = this.hot.get(sid);
    if (cached) return cached;
    const stored = await this.store.get<StoredSession>(keys.session(sid));
    if (!stored) return undefined;
    let layout: Layout;
    if ('layout' in stored) {
      const known = this.layouts.get(stored.layout) ?? await this.store.get<Layout>(layoutKey(stored.layout));
      if (!known) return undefined;
      this.layouts.set(stored.layout, known);
      this.noteLayout(stored.guid, stored.layout);
      layout = known;
    } else layout = { variants: stored.variants, rungs: stored.rungs }; // stored whole (before layouts)
    const hot: HotSession = this.hot.get(sid) ?? new CachedSession(stored, layout, await this.records(sid));
    this.hot.set(stored.id, hot);
    return hot;
  }

  /** load() without a wait for a session cached here; undefined when it is not (then ask load). */
  loadNow(guid: string, sid: string): HotSession | SsaiError | undefined {
    const cached = sid ? this.hot.get(sid) : undefined;
    if (!cached) return undefined;
    return cached.session.guid === guid ? cached : ssaiError('SESSION_NOT_FOUND');
  }

  /** The session of a playback URL: one of this configuration's, else SESSION_NOT_FOUND. */
  async load(guid: string, sid: string): Promise<HotSession | SsaiError> {
    const hot = await this.get(sid);
    if (!hot || hot.session.guid !== guid) return ssaiError('SESSION_NOT_FOUND');
    return hot;
  }

  /**
   * Keeps a live break long out of the window in its retired form (ad-planner `retired`), in the store and in this
   * process: a session then holds a few hundred bytes per past break instead of its beacons (issue 19 point 4). Every
   * instance that sees the break gone does the same and stores the same value.
   */
  async retire(hot: HotSession, record: AvailRecord): Promise<boolean> {
    const key = keys.avail(hot.session.id, record.id);
    if (record.retired || this.retiring.has(key)) return false;
    this.retiring.add(key);
    try {
      const kept = retired(record);
      await this.store.set(key, kept, this.sessionTtlMs);
      // the stored copy: shared with the other sessions'
      const stored = (await this.store.get<AvailRecord>(key)) ?? kept;
      const at = hot.records.indexOf(record);
      if (at >= 0) hot.records[at] = stored;
      return true;
    } finally {
      this.retiring.delete(key);
    }
  }

  /** The session's decided avails as stored (another instance may have added some). */
  async records(sid: string): Promise<AvailRecord[]> {
    const ids = [...new Set(await this.store.list(keys.availList(sid)))];
    const out: AvailRecord[] = [];
    for (const id of ids) {
      const r = await this.store.get<AvailRecord>(keys.avail(sid, id));
      if (r) out.push(r);
    }
    return exactArray(out); // a pushed-to array keeps room for 17 more (~150 B per viewer, issue 19 point 4)
  }
}

/** Adds decisions not yet in the session's cached list (by id; a decision never changes once made). */
export function mergeRecords(hot: HotSession, records: AvailRecord[]): void {
  const added = records.filter((r, i) => !hot.records.some((x) => x.id === r.id) && records.findIndex((x) => x.id === r.id) === i);
  // a new array of exact length rather than push() (room for 17 more, ~150 B per viewer); a few decisions per session
  if (added.length) hot.records = exactArray([...hot.records, ...added]);
}
