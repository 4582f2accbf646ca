// Origin playlists fetched once per URL per refresh however many sessions ask (issue 5 "Speed by design"):
// concurrent requests share one fetch (single-flight) and the answer is reused until the origin is expected to have
// refreshed it. What is derived from the text (the scanned playlist, its avails) is kept with it in `memo`, so every
// session shares one parse per refresh.
import { Agent, request } from 'undici';
import { ssaiError, type SsaiError } from '../errors.js';
import type { OriginErrorReason } from '../metrics.js';

export type OriginOk = {
  ok: true;
  text: string;
  /** values derived from this text, computed once per fetch and shared (read-only) by every session */
  memo: Map<string, unknown>;
};
export type OriginResult = OriginOk | { ok: false; error: SsaiError; reason: OriginErrorReason };

/** The value derived from a fetched text under name, computed on first use and shared by every later caller. */
export function derive<T>(result: OriginOk, name: string, compute: (text: string) => T): T {
  if (result.memo.has(name)) return result.memo.get(name) as T;
  const value = compute(result.text);
  result.memo.set(name, value);
  return value;
}

export interface OriginFetcherOptions {
  timeoutMs?: number;
  /**
   * The bound of a blocking playlist reload (LL-HLS `_HLS_msn`): the origin holds it until the segment or part exists,
   * up to three target durations (RFC 8216bis §6.2.5.2). Default 9000 ms, under hls.js's 10 s first-byte budget.
   */
  blockingTimeoutMs?: number;
  maxBytes?: number;
  /**
   * How long a fetched playlist is reused. Undefined (the default): aligned to the origin's refresh — a live media
   * playlist is reused until one target duration after the fetch that saw it change (so one fetch per refresh),
   * half a target duration after a fetch that saw no change (RFC 8216 6.3.4), 2 s for a multivariant playlist and
   * 10 s for a VOD (ENDLIST) playlist. A number: that fixed TTL. 0 keeps only the single-flight coalescing.
   */
  cacheMs?: number;
  /**
   * How long a caller waits for a refresh before it gets the previous copy (default 30 ms; 0: always waits). One slow
   * origin answer would otherwise hold every viewer's playlist of that URL (issue 19 point 4: a deadline, not a
   * stall). Only within staleMaxMs past the copy's reuse time: an origin gone for longer shows as its error.
   */
  staleAfterMs?: number;
  /** default 4000 ms */
  staleMaxMs?: number;
  now?: () => number;
  onFetch?: () => void;
  onError?: (reason: OriginErrorReason) => void;
}

export class OriginFetcher {
  private readonly inflight = new Map<string, { fresh: Promise<OriginResult>; stale?: Promise<OriginResult> }>();
  private readonly cache = new Map<string, { until: number; changedAt: number; result: OriginOk }>();
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly blockingTimeoutMs: number;
  private readonly maxBytes: number;
  private readonly cacheMs: number | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: OriginFetcherOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.blockingTimeoutMs = Math.max(opts.blockingTimeoutMs ?? 9000, this.timeoutMs);
    this.maxBytes = opts.maxBytes ?? 2 * 1024 * 1024;
    this.cacheMs = opts.cacheMs;
    this.now = opts.now ?? Date.now;
    this.agent = new Agent({ connections: 64, keepAliveTimeout: 10_000, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
  }

  /**
   * The playlist at url. `blocking`: the URL carries LL-HLS delivery directives, so the origin may hold the answer
   * (bounded by blockingTimeoutMs). The URL with its directives is the key of the cache and of the single flight:
   * viewers waiting for the same part share one held request.
   */
  /** The copy of url fetch() would answer at once (cached and fresh), without a promise; else undefined. */
  fetchNow(url: string): OriginOk | undefined {
    const hit = this.cacheMs === 0 ? undefined : this.cache.get(url);
    return hit && this.now() < hit.until ? hit.result : undefined;
  }

  fetch(url: string, opts: { blocking?: boolean; mpd?: boolean } = {}): Promise<OriginResult> {
    const hit = this.cacheMs === 0 ? undefined : this.cache.get(url);
    const now = this.now();
    if (hit && now < hit.until) return Promise.resolve(hit.result);
    let pending = this.inflight.get(url);
    if (!pending) {
      const fresh = this.load(url, opts.blocking ? this.blockingTimeoutMs : this.timeoutMs, opts.mpd === true).then((result) => {
        if (!result.ok) { this.opts.onError?.(result.reason); return result; }
        return this.cacheMs === 0 ? result : this.remember(url, result);
      }).finally(() => this.inflight.delete(url));
      pending = { fresh };
      const staleAfter = this.opts.staleAfterMs ?? 30;
      if (hit && staleAfter > 0 && now - hit.until < (this.opts.staleMaxMs ?? 4000)) {
        // One timer per refresh, shared by its waiters: past it they take the previous copy.
        const previous = hit.result;
        pending.stale = Promise.race([fresh, new Promise<OriginResult>((r) => { setTimeout(() => r(previous), staleAfter).unref(); })]);
      }
      this.inflight.set(url, pending);
    }
    return pending.stale ?? pending.fresh;
  }

  private remember(url: string, fresh: OriginOk): OriginOk {
    const at = this.now();
    const prev = this.cache.get(url);
    // An unchanged text keeps the previous result: the derived values (memo) stay shared across refreshes.
    const same = prev !== undefined && prev.result.text === fresh.text;
    const result = same ? prev.result : fresh;
    const changedAt = same ? prev.changedAt : at;
    let until: number;
    if (this.cacheMs !== undefined) until = at + this.cacheMs;
    else {
      const target = /#EXT-X-TARGETDURATION:\s*(\d+(?:\.\d+)?)/.exec(result.text);
      if (!target) until = at + 2000; // multivariant
      else if (/^#EXT-X-ENDLIST/m.test(result.text)) until = at + 10_000;
      else {
        // A low-latency playlist changes with every part (LL-HLS §4.4.3.7): its refresh is the part target.
        const part = /#EXT-X-PART-INF:PART-TARGET=(\d+(?:\.\d+)?)/.exec(result.text);
        const td = Math.max(part ? 0.1 : 0.5, Number(part ? part[1] : target[1])) * 1000;
        // Changed by this fetch: the next refresh is one target duration away. Unchanged: the origin is late, look
        // again in half a target duration.
        until = same ? Math.max(at + td / 2, changedAt + td) : at + td;
      }
    }
    if (!prev && this.cache.size >= 10_000) this.cache.clear();
    this.cache.set(url, { until, changedAt, result });
    return result;
  }

  /** `mpd`: a DASH MPD is asked for (issue 33): an XML body, read by the DASH route. */
  private async load(url: string, timeoutMs: number, mpd = false): Promise<OriginResult> {
    this.opts.onFetch?.();
    const fail = (reason: OriginErrorReason, error: SsaiError): OriginResult => ({ ok: false, reason, error });
    try {
      const res = await request(url, { dispatcher: this.agent, signal: AbortSignal.timeout(timeoutMs), headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      if (res.statusCode >= 400) {
        await res.body.dump().catch(() => undefined);
        const reason = res.statusCode < 500 ? 'http_4xx' : 'http_5xx';
        return fail(reason, ssaiError('ORIGIN_HTTP_ERROR', `the origin answered ${res.statusCode} for the playlist`, res.statusCode));
      }
      const length = Number(res.headers['content-length'] ?? 0);
      if (length > this.maxBytes) {
        res.body.destroy();
        return fail('too_large', ssaiError('ORIGIN_TOO_LARGE', `the origin playlist is ${length} bytes, over ${this.maxBytes}`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > this.maxBytes) {
          res.body.destroy();
          return fail('too_large', ssaiError('ORIGIN_TOO_LARGE', `the origin playlist is over ${this.maxBytes} bytes`));
        }
        chunks.push(chunk as Buffer);
      }
      const text = Buffer.concat(chunks).toString('utf8');
      if (mpd) {
        if (!text.replace(/^\uFEFF/, '').trimStart().startsWith('<')) return fail('not_hls', ssaiError('ORIGIN_NOT_DASH', 'the origin body is not XML'));
      } else if (!text.replace(/^\uFEFF/, '').trimStart().startsWith('#EXTM3U')) {
        return fail('not_hls', ssaiError('ORIGIN_NOT_HLS', 'the origin body does not start with #EXTM3U'));
      }
      return { ok: true, text, memo: new Map() };
    } catch (e) {
      const name = e instanceof Error ? e.name : '';
      const code = (e as { code?: string }).code ?? '';
      if (name === 'TimeoutError' || name === 'AbortError' || code.includes('TIMEOUT')) {
        return fail('timeout', ssaiError('ORIGIN_TIMEOUT', `the origin did not answer within ${timeoutMs} ms`));
      }
      return fail('connection', ssaiError('ORIGIN_HTTP_ERROR', `the origin could not be reached (${code || name})`));
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
