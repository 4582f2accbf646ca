// Sessions, avail decisions and beacon marks behind one interface (STYLE.md rule 7): memory LRU+TTL by default,
// Redis when REDIS_URL is set, so any number of ssai instances give one viewer the same ads (DESIGN.md "Processes").
import { LRUCache } from 'lru-cache';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createRedisClient, RedisReadiness } from '../../kernel/store/redis.js';
import { growingLru } from './growing-lru.js';

export interface SessionStore {
  /** the value stored under key, frozen: both stores hand out shared read-only copies (equal small values are one object) */
  get<T>(key: string): Promise<T | undefined>;
  /**
   * get without a wait, where the store holds its values in this process (the memory store): the playlist's hot path
   * reads several values per reload, and a promise for each was much of what it allocated. Absent on a shared store.
   */
  getNow?<T>(key: string): T | undefined;
  set(key: string, value: unknown, ttlMs: number): Promise<void>;
  /** stores value unless the key exists; returns the value that is stored afterwards and whether ours won */
  setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<{ value: T; created: boolean }>;
  /**
   * Sets bit `bit` (0–30) of the bit set under key, kept with the TTL; true when it was not set before (the caller
   * "won" the mark). One value holds a break's once-only events (issue 28: 12 marks per break per viewer were 12 keys).
   */
  markOnce(key: string, bit: number, ttlMs: number): Promise<boolean>;
  /** markOnce without a wait, where the store is in this process (the memory store); absent on a shared store */
  markOnceNow?(key: string, bit: number, ttlMs: number): boolean;
  /**
   * appends to a list kept with the TTL; duplicates are kept, readers dedupe. `maxLength`: only the newest that many
   * are kept (a debug log, issue 31)
   */
  push(key: string, value: string, ttlMs: number, maxLength?: number): Promise<void>;
  list(key: string): Promise<string[]>;
  /** removes values (absent ones are skipped) */
  delete(keys: readonly string[]): Promise<void>;
  close(): Promise<void>;
  /** false while a shared store is known to be away (commands would fail at once); absent: always available */
  readonly available?: boolean;
  /**
   * true where the store lives in this process (the memory store): no other instance reads or writes it, so what
   * guards against another instance (a decision's lock) has nothing to guard
   */
  readonly local?: boolean;
}

/**
 * Strings shared by many sessions (origin and tracking URLs, creative keys, guids) kept once: a bounded table,
 * cleared when full (a string missed then is only stored twice, never wrong).
 */
const INTERN_MAX = 20_000;
const interned = new Map<string, string>();
/** A string of a stored value as the table holds it (a viewer's own, see ownString, is never in the table). */
function intern(s: string): string {
  return s.length < 8 || s.length > 2048 ? s : internAlways(s, false);
}

/** Packed bytes (a control character first) or joined ids (NUL-separated): one viewer's own. */
const ownString = (s: string): boolean => s.charCodeAt(0) < 0x20 || s.includes('\u0000');

/** The table's copy of `s`, added when absent: a flat copy when `copy` (a name sliced from a longer key). */
function internAlways(s: string, copy = true): string {
  const hit = interned.get(s);
  if (hit !== undefined) return hit;
  if (interned.size >= INTERN_MAX) interned.clear();
  const own = copy ? freshKey(s) : s;
  interned.set(own, own);
  return own;
}

/**
 * A JSON-equivalent deep copy, frozen, with its strings interned: what the memory store keeps and hands out. Made
 * through JSON text so no string of the copy is a slice of a larger one (a VAST document, a playlist) kept alive.
 */
export function frozenCopy(value: unknown): unknown {
  return value === undefined ? undefined : freezeInterned(JSON.parse(JSON.stringify(value)));
}

/**
 * Frozen values and sub-values repeated across sessions (an ad plan, an empty list, a retired break) kept once: a
 * bounded table keyed by a hash of their JSON text (a hit is checked against the text), cleared when full, like the
 * strings'.
 * Keyed by hash, not by the text: with personalised ads most records' parts are unique to a viewer, and a text key
 * would hold each of them twice until the table clears (issue 19 point 4, memory per viewer).
 */
const SHARED_MAX = 5_000;
/** up to this much JSON text: a retired break of two ads is ~350 characters; a live one with its beacons ~650 */
const SHARED_MAX_JSON = 512;
/** with their text, which a hit is checked against: at most SHARED_MAX × SHARED_MAX_JSON characters (2.6 MB) */
const sharedValues = new Map<number, { value: unknown; json: string }>();

/** FNV-1a over the UTF-16 code units: a table key, never trusted alone. */
function hashText(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Interns the strings of a value fresh from JSON.parse and freezes it in place: the parser's objects keep their
 * compact layout (a rebuilt object would grow an out-of-object property array past a few properties).
 */
function freezeInterned(value: unknown): unknown {
  return freezeShared(value);
}

/**
 * The JSON text of the value freezeShared last returned, or undefined when that is over SHARED_MAX_JSON: a value's
 * text is made from its parts' (each part is shared on its own), so a large value is never stringified whole and a
 * small one is stringified once, not once per level it is nested in. (A variable, not a returned pair: no object
 * per node of the walk.)
 */
let sharedJson: string | undefined;

/** What JSON.stringify gives for a string of this length at least (its quotes): over the limit, it is not made. */
const jsonOfString = (s: string): string | undefined => (s.length + 2 > SHARED_MAX_JSON ? undefined : JSON.stringify(s));

function freezeShared(value: unknown): unknown {
  if (typeof value === 'string') {
    // A viewer's own string (packed bytes, joined ids) is shared with no other viewer: neither interned (in the table it
    // would only push out the strings that are, two per decision) nor given a sharing text.
    if (ownString(value)) {
      sharedJson = undefined;
      return value;
    }
    const s = intern(value);
    sharedJson = jsonOfString(s);
    return s;
  }
  if (value === null || typeof value !== 'object') {
    // (numbers from JSON.parse are finite: String() writes them as JSON does)
    sharedJson = String(value);
    return value;
  }
  let json: string | undefined;
  if (Array.isArray(value)) {
    json = '[';
    for (let i = 0; i < value.length; i++) {
      value[i] = freezeShared(value[i]);
      json = json !== undefined && sharedJson !== undefined && json.length + sharedJson.length < SHARED_MAX_JSON ? (i ? `${json},${sharedJson}` : json + sharedJson) : undefined;
    }
    if (json !== undefined) json += ']';
  } else {
    const o = value as Record<string, unknown>;
    json = '{';
    let first = true;
    for (const k in o) {
      const before = o[k];
      const x = freezeShared(before);
      if (json !== undefined && sharedJson !== undefined) {
        const key = jsonOfString(k);
        json = key !== undefined && json.length + key.length + sharedJson.length < SHARED_MAX_JSON ? `${json}${first ? '' : ','}${key}:${sharedJson}` : undefined;
      } else json = undefined;
      first = false;
      // (an interned string is === the parser's own copy: only an object can be skipped when it comes back the same)
      if (x === before && typeof x !== 'string') continue;
      // An own "__proto__" (JSON.parse makes one from a player's parameter): assigned, it would set the prototype.
      if (k === '__proto__') Object.defineProperty(o, k, { value: x });
      else o[k] = x;
    }
    if (json !== undefined) json += '}';
  }
  Object.freeze(value);
  // A small stored value is shared too (frozen: safe under several keys): a retired break is the same for every viewer
  // given the same creatives (issue 19 point 4); a large one (a live break with its viewer's beacons) is its key's own.
  sharedJson = json !== undefined && json.length <= SHARED_MAX_JSON ? json : undefined;
  if (sharedJson === undefined) return value;
  const hash = hashText(sharedJson);
  const hit = sharedValues.get(hash);
  // (the text is kept with the value: made again at each hit it cost a track's marks, twenty small pairs, half their copy)
  if (hit !== undefined && hit.json === sharedJson) return hit.value;
  if (sharedValues.size >= SHARED_MAX) sharedValues.clear();
  sharedValues.set(hash, { value, json: sharedJson });
  return value;
}

/** A flat copy of a key: a key made from a request URL may otherwise be a slice keeping the whole URL alive. */
const freshKey = (key: string): string => JSON.parse(JSON.stringify(key)) as string;

// Values are stored as they are (no wrapper object per key: 32 bytes per key, 3 keys per viewer); null, which the
// LRU cannot hold, as a marker.
type Entry = NonNullable<unknown>;
const NULL_VALUE: Entry = Object.freeze({});
const toEntry = (value: unknown): Entry => (frozenCopy(value) ?? NULL_VALUE) as Entry;
const fromEntry = (e: Entry | undefined): unknown => (e === NULL_VALUE ? null : e);
const SHORT_TTL_MS = 60_000;

/**
 * The kinds of key that belong to one viewer session (`<kind>:<session id>[:<rest>]`, avail-record `keys` and the beacon
 * marks): the memory store keeps them together, one LRU entry per session instead of one per key.
 */
const SESSION_KINDS = new Set(['session', 'avails', 'avail', 'obs', 'vmap', 'beacon']);

/** A session's values: [member, value, member, value, …], replaced (exact length) on every write. */
type Group = ReadonlyArray<string | Entry>;
/** A list's member name starts with this (lists and values are apart, as in Redis) */
const LIST_MEMBER = '\u0000';

/**
 * The session a key belongs to and its name within the session, or undefined for a key of no session. `forWrite`:
 * the member name ("avail:dr-12", "beacon:dr-12:0:start") is the same in every session and is held once (interned);
 * a read only compares it (strings compare by value), so it skips the table.
 */
function sessionKeyParts(key: string, forWrite = true): { sid: string; member: string } | undefined {
  const colon = key.indexOf(':');
  if (colon <= 0 || !SESSION_KINDS.has(key.slice(0, colon))) return undefined;
  const next = key.indexOf(':', colon + 1);
  const sid = next < 0 ? key.slice(colon + 1) : key.slice(colon + 1, next);
  if (!sid) return undefined;
  const member = next < 0 ? key.slice(0, colon) : key.slice(0, colon) + key.slice(next);
  return { sid, member: forWrite ? internAlways(member) : member };
}

function memberOf(group: Group | undefined, member: string): Entry | undefined {
  if (!group) return undefined;
  for (let i = 0; i < group.length; i += 2) if (group[i] === member) return group[i + 1] as Entry;
  return undefined;
}

/**
 * A copy of `items` whose backing store has room for exactly them: V8 gives an array built by push() or spread, and
 * its slice(), room for up to 17 more (measured: 168 B for a list of two ids, 96 B for a session of five keys).
 */
export function exactArray<T>(items: readonly T[]): T[] {
  const out = new Array<T>(items.length);
  for (let i = 0; i < items.length; i++) out[i] = items[i]!;
  return out;
}

/** A list with one more value, of exact length, keeping only the newest maxLength when given. */
function appended(list: readonly string[], value: string, maxLength: number | undefined): string[] {
  const all = [...list, value];
  return exactArray(maxLength === undefined || all.length <= maxLength ? all : all.slice(-Math.max(1, maxLength)));
}

/**
 * The group with member set to value: the same array when the member is there and stays (a group is this store's own,
 * never handed out), else a new one of exact length.
 */
function withMember(group: Group | undefined, member: string, value: Entry | undefined): Group {
  if (group && value !== undefined) {
    for (let i = 0; i < group.length; i += 2) {
      if (group[i] !== member) continue;
      (group as Array<string | Entry>)[i + 1] = value;
      return group;
    }
  }
  const rest: Array<string | Entry> = [];
  for (let i = 0; group && i < group.length; i += 2) if (group[i] !== member) rest.push(group[i]!, group[i + 1]!);
  if (value !== undefined) rest.push(member, value);
  return exactArray(rest);
}

/**
 * Values are kept as frozen deep copies (read-only for callers: a mutation throws in strict mode): no JSON parse per
 * read on the hot path, and strings repeated across sessions are held once.
 * A viewer session's keys (SESSION_KINDS) live in one entry per session (issue 19 point 4: an entry per key cost its key
 * string and LRU slots, ~110 B for each decided break and each beacon mark); the entry lives as long as its
 * longest-lived key. Keys of a short TTL (decision locks) and of no session have their own entries.
 */
export class MemorySessionStore implements SessionStore {
  readonly local = true;
  private readonly lru: LRUCache<string, Entry>;
  private readonly groups: LRUCache<string, Group>;
  /** entries of a short TTL (decision locks): purged when they expire rather than when evicted */
  private readonly shortLived = growingLru<string, Entry>(100_000, { ttl: SHORT_TTL_MS, ttlAutopurge: true });
  private readonly lists: LRUCache<string, string[]>;

  constructor(opts: { max?: number; defaultTtlMs?: number } = {}) {
    const max = opts.max ?? 200_000;
    this.lru = growingLru(max, { ttl: opts.defaultTtlMs ?? 3_600_000 });
    this.groups = growingLru(max, { ttl: opts.defaultTtlMs ?? 3_600_000 });
    this.lists = growingLru(max, { ttl: opts.defaultTtlMs ?? 3_600_000 });
  }

  private read(key: string, parts = sessionKeyParts(key, false)): Entry | undefined {
    const grouped = parts ? memberOf(this.groups.get(parts.sid), parts.member) : this.lru.get(key);
    return grouped ?? this.shortLived.get(key);
  }

  /** Writes (or with undefined removes) a long-lived value. */
  private write(key: string, entry: Entry | undefined, ttlMs: number, parts = sessionKeyParts(key)): void {
    if (parts) this.writeMember(parts, entry, ttlMs);
    else if (entry === undefined) this.lru.delete(key);
    else this.lru.set(freshKey(key), entry, { ttl: ttlMs });
  }

  /** A session's member; its entry keeps the longer of its TTLs. */
  private writeMember(parts: { sid: string; member: string }, entry: Entry | undefined, ttlMs: number): void {
    const group = this.groups.get(parts.sid);
    if (!group && entry === undefined) return;
    const ttl = Math.max(ttlMs, group ? this.groups.getRemainingTTL(parts.sid) : 0);
    this.groups.set(group ? parts.sid : freshKey(parts.sid), withMember(group, parts.member, entry), { ttl });
  }

  async get<T>(key: string): Promise<T | undefined> {
    return fromEntry(this.read(key)) as T | undefined;
  }

  getNow<T>(key: string): T | undefined {
    return fromEntry(this.read(key)) as T | undefined;
  }

  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    // (undefined, as JSON gives nothing, is not stored: the key reads as absent, as in Redis)
    const entry = value === undefined ? undefined : toEntry(value);
    if (ttlMs <= SHORT_TTL_MS) {
      this.write(key, undefined, ttlMs);
      if (entry === undefined) this.shortLived.delete(key);
      else this.shortLived.set(freshKey(key), entry, { ttl: ttlMs });
    } else {
      this.shortLived.delete(key);
      this.write(key, entry, ttlMs);
    }
  }

  async setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<{ value: T; created: boolean }> {
    const e = this.read(key);
    if (e !== undefined) return { value: fromEntry(e) as T, created: false };
    if (value !== undefined) {
      if (ttlMs <= SHORT_TTL_MS) this.shortLived.set(freshKey(key), toEntry(value), { ttl: ttlMs });
      else this.write(key, toEntry(value), ttlMs);
    }
    return { value, created: true };
  }

  async markOnce(key: string, bit: number, ttlMs: number): Promise<boolean> {
    return this.markOnceNow(key, bit, ttlMs);
  }

  /** markOnce without a wait (this store is in process): a segment redirect marks its beacons on every fetch. */
  markOnceNow(key: string, bit: number, ttlMs: number): boolean {
    const mask = 1 << checkedBit(bit);
    const parts = sessionKeyParts(key, false);
    const grouped = parts ? memberOf(this.groups.get(parts.sid), parts.member) : undefined;
    const before = grouped ?? this.read(key, parts);
    const bits = typeof before === 'number' ? before : 0;
    if (bits & mask) return false;
    // (a number is stored as it is: no copy to make)
    if (ttlMs <= SHORT_TTL_MS) this.shortLived.set(before === undefined ? freshKey(key) : key, bits | mask, { ttl: ttlMs });
    // (a member of the session's group is set in place under its name; a new one is named through the table)
    else this.write(key, bits | mask, ttlMs, grouped !== undefined ? parts : sessionKeyParts(key));
    return true;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      this.shortLived.delete(key);
      this.write(key, undefined, 0);
    }
  }

  async push(key: string, value: string, ttlMs: number, maxLength?: number): Promise<void> {
    const parts = sessionKeyParts(key);
    if (parts) {
      const list = { sid: parts.sid, member: internAlways(LIST_MEMBER + parts.member) };
      const l = memberOf(this.groups.get(list.sid), list.member) as readonly string[] | undefined;
      // the list's items (avail ids) are the same in every session: held once
      this.writeMember(list, appended(l ?? [], internAlways(value), maxLength), ttlMs);
      return;
    }
    const l = this.lists.get(key);
    if (l) this.lists.set(key, appended(l, freshKey(value), maxLength), { ttl: ttlMs });
    else this.lists.set(freshKey(key), [freshKey(value)], { ttl: ttlMs });
  }

  async list(key: string): Promise<string[]> {
    const parts = sessionKeyParts(key);
    if (parts) return [...((memberOf(this.groups.get(parts.sid), LIST_MEMBER + parts.member) as readonly string[] | undefined) ?? [])];
    return [...(this.lists.get(key) ?? [])];
  }

  /** entries held (a session's keys count once) */
  get size(): number {
    return this.lru.size + this.groups.size + this.shortLived.size + this.lists.size;
  }

  async close(): Promise<void> {
    this.lru.clear();
    this.groups.clear();
    this.shortLived.clear();
    this.lists.clear();
  }
}

/**
 * A store command failed because the store is unreachable (issue 27: Redis down). Callers on the playlist path
 * degrade (content for a break not yet decided, what this process holds for the rest) and never answer 5xx for it.
 */
export class SessionStoreUnavailableError extends Error {
  readonly code = 'SESSION_STORE_UNAVAILABLE';
  constructor(cause: unknown) {
    super(`the session store is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'SessionStoreUnavailableError';
  }
}

export function isSessionStoreUnavailable(value: unknown): value is SessionStoreUnavailableError {
  return typeof value === 'object' && value !== null && (value as { code?: unknown }).code === 'SESSION_STORE_UNAVAILABLE';
}

function checkedBit(bit: number): number {
  if (!Number.isInteger(bit) || bit < 0 || bit > 30) throw new RangeError(`a mark's bit is 0 to 30, not ${bit}`);
  return bit;
}

/** After a command of a connected Redis failed (timed out), the next ones fail at once for this long: no pile-up. */
const FAILED_COMMAND_PAUSE_MS = 1_000;

export class RedisSessionStore implements SessionStore {
  private readonly redis: Redis;
  private readonly readiness: RedisReadiness;
  private pausedUntil = 0;

  /** onRoundTrip: called once per request to Redis (a MULTI counts once), for the ssai_redis_round_trips_total metric */
  constructor(url: string, private readonly prefix = 'ssai:', private readonly onRoundTrip: () => void = () => undefined, logger?: Logger) {
    this.redis = createRedisClient(url, { purpose: 'ssai sessions', logger });
    this.readiness = new RedisReadiness(this.redis);
  }

  /** Whether a command would be sent now (false while Redis is away: commands fail at once). */
  get available(): boolean {
    return this.readiness.ready && Date.now() >= this.pausedUntil;
  }

  /** Runs one round trip; any failure of Redis (down, dropped, silent) becomes SessionStoreUnavailableError. */
  private async command<T>(run: () => Promise<T>): Promise<T> {
    // A command refused by the pause does not extend it: only a command sent to Redis that failed starts one (else a
    // steady stream of requests would keep the store paused for good after one slow reply).
    if (Date.now() < this.pausedUntil) throw new SessionStoreUnavailableError(new Error('a command failed less than a second ago'));
    try {
      await this.readiness.check();
      this.onRoundTrip();
      return await run();
    } catch (error) {
      if (this.readiness.ready) this.pausedUntil = Date.now() + FAILED_COMMAND_PAUSE_MS;
      throw new SessionStoreUnavailableError(error);
    }
  }

  async get<T>(key: string): Promise<T | undefined> {
    const v = await this.command(() => this.redis.get(this.prefix + key));
    // frozen and interned as the memory store's values: every viewer's copy of a retired break is then one object,
    // where each read made its own (~600 B per viewer per past break, the hour's soak, issue 32)
    return v === null ? undefined : (freezeInterned(JSON.parse(v)) as T);
  }

  async set(key: string, value: unknown, ttlMs: number): Promise<void> {
    await this.command(() => this.redis.set(this.prefix + key, JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async setIfAbsent<T>(key: string, value: T, ttlMs: number): Promise<{ value: T; created: boolean }> {
    const ok = await this.command(() => this.redis.set(this.prefix + key, JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)), 'NX'));
    if (ok === 'OK') return { value, created: true };
    const existing = await this.get<T>(key);
    return existing === undefined ? { value, created: false } : { value: existing, created: false };
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (!keys.length) return;
    await this.command(() => this.redis.del(...keys.map((k) => this.prefix + k)));
  }

  async markOnce(key: string, bit: number, ttlMs: number): Promise<boolean> {
    const offset = checkedBit(bit);
    const answers = await this.command(() => this.redis.multi().setbit(this.prefix + key, offset, 1).pexpire(this.prefix + key, Math.max(1, Math.round(ttlMs))).exec());
    const failed = answers?.find(([error]) => error)?.[0];
    if (failed || !answers) throw new SessionStoreUnavailableError(failed ?? new Error('MULTI answered nothing'));
    return answers[0]?.[1] === 0;
  }

  async push(key: string, value: string, ttlMs: number, maxLength?: number): Promise<void> {
    const k = this.prefix + key;
    const answers = await this.command(() => {
      const multi = this.redis.multi().rpush(k, value);
      if (maxLength !== undefined) multi.ltrim(k, -Math.max(1, maxLength), -1);
      return multi.pexpire(k, Math.max(1, Math.round(ttlMs))).exec();
    });
    const failed = answers?.find(([error]) => error)?.[0];
    if (failed) throw new SessionStoreUnavailableError(failed);
  }

  async list(key: string): Promise<string[]> {
    return this.command(() => this.redis.lrange(this.prefix + key, 0, -1));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export function createSessionStore(redisUrl: string | undefined, prefix?: string, onRoundTrip?: () => void, logger?: Logger): SessionStore {
  return redisUrl ? new RedisSessionStore(redisUrl, prefix, onRoundTrip, logger) : new MemorySessionStore();
}
