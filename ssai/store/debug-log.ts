// A debug session's log (issue 31 item 8): what the proxy fetched, asked and decided for one viewer who started with
// `ads.debug=1`, kept in the session store (any instance writes and reads it) for an hour and written as JSON log
// lines. Sessions without debug never reach this module: their callers check `session.debug` first.
import type { Logger } from 'pino';
import type { SsaiMetrics } from '../metrics.js';
import type { SessionStore } from './session-store.js';

/** What a break played for the viewer. partly-filled: ads, then slate or content for the rest. */
export type DebugDecisionOutcome = 'filled' | 'partly-filled' | 'slate' | 'content';

/**
 * Why a break was not (wholly) filled: late, the decision deadline passed; suppressed, avail suppression; threshold,
 * the personalization threshold; unprepared-creative, an ad's creative was not prepared (yet); ad-server-error, the
 * ad server failed (details say how); empty, it answered no ad; no-fit, its ads did not fit the break; short, its ads
 * were shorter than the break.
 */
export type DebugDecisionReason = 'late' | 'suppressed' | 'threshold' | 'unprepared-creative' | 'ad-server-error' | 'empty' | 'no-fit' | 'short';

export type DebugEntry =
  | { kind: 'session'; at: number; mode: 'stitched' | 'guided'; origin: string; playerParams: Record<string, string> }
  /** an origin playlist as this session's request got it (the proxy shares fetches between sessions: ms may be 0) */
  | { kind: 'origin'; at: number; url: string; status: number; ms: number; bytes?: number; code?: string; error?: string }
  /** an ad server request (the filled URL; a wrapper's target too) and its raw answer, cut at RAW_ANSWER_MAX_CHARS */
  | { kind: 'ad-request'; at: number; availId: string; url: string; ms: number; status?: number; bytes?: number; answer?: string; truncated?: true; error?: string }
  | { kind: 'decision'; at: number; availId: string; outcome: DebugDecisionOutcome; reason?: DebugDecisionReason; details?: Record<string, unknown> };

/** A session as this log needs it: its `debug` flag is the only thing a session without debug costs. */
export type DebugSession = { id: string; guid: string; debug?: true };

/** the longest raw ad server answer kept in an entry */
export const RAW_ANSWER_MAX_CHARS = 64 * 1024;
export const DEBUG_LOG_TTL_MS = 3_600_000;
/** entries kept per session: the oldest are dropped */
export const DEBUG_LOG_MAX_ENTRIES = 1_000;

export const debugLogKey = (guid: string, sid: string): string => `debug:${guid}:${sid}`;

export interface DebugLogDeps {
  store: SessionStore;
  logger: Logger;
  metrics: Pick<SsaiMetrics, 'debugEntries'>;
  now: () => number;
  ttlMs?: number;
  maxEntries?: number;
}

type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export class DebugLog {
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(private readonly deps: DebugLogDeps) {
    this.ttlMs = deps.ttlMs ?? DEBUG_LOG_TTL_MS;
    this.maxEntries = deps.maxEntries ?? DEBUG_LOG_MAX_ENTRIES;
  }

  /**
   * Adds an entry to the session's log and writes it as a log line. Never fails its caller: a store away loses the
   * entry (the log line stays).
   */
  write(session: DebugSession, entry: Without<DebugEntry, 'at'>): void {
    const full = { at: this.deps.now(), ...entry } as DebugEntry;
    this.deps.metrics.debugEntries.inc({ kind: entry.kind });
    this.deps.logger.info({ debug: true, session: session.id, guid: session.guid, entry: full }, `ssai debug: ${entry.kind}`);
    this.deps.store.push(debugLogKey(session.guid, session.id), JSON.stringify(full), this.ttlMs, this.maxEntries)
      .catch((e: unknown) => this.deps.logger.warn({ err: e, session: session.id }, 'a debug log entry could not be stored'));
  }

  /**
   * A break's decision. Reasons other helpers' policies give (suppressed, threshold) are in DebugDecisionReason so
   * that their code can call this where it decides.
   */
  decision(session: DebugSession, availId: string, outcome: DebugDecisionOutcome, reason?: DebugDecisionReason, details?: Record<string, unknown>): void {
    this.write(session, { kind: 'decision', availId, outcome, ...(reason ? { reason } : {}), ...(details ? { details } : {}) });
  }

  /** An ad server request and its raw answer, cut at RAW_ANSWER_MAX_CHARS (saying so). */
  adRequest(session: DebugSession, availId: string, exchange: { url: string; ms: number; status?: number; body?: string; error?: string }): void {
    const { body, ...rest } = exchange;
    const cut = body !== undefined && body.length > RAW_ANSWER_MAX_CHARS;
    this.write(session, {
      kind: 'ad-request', availId, ...rest,
      ...(body !== undefined ? { bytes: Buffer.byteLength(body), answer: cut ? body.slice(0, RAW_ANSWER_MAX_CHARS) : body } : {}),
      ...(cut ? { truncated: true as const } : {}),
    });
  }

  /** The session's entries, oldest first; undefined when it has none (no debug session of this configuration, or expired). */
  async read(guid: string, sid: string): Promise<DebugEntry[] | undefined> {
    const lines = await this.deps.store.list(debugLogKey(guid, sid));
    if (!lines.length) return undefined;
    return lines.map((l) => JSON.parse(l) as DebugEntry);
  }
}
