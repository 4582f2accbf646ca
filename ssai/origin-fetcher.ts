// Origin playlists fetched once per URL per refresh however many sessions ask (issue 5 "Speed by design"):
// concurrent requests share one fetch (single-flight) and the answer is reused for a short TTL.
import { Agent, request } from 'undici';
import { ssaiError, type SsaiError } from './errors.js';
import type { OriginErrorReason } from './metrics.js';

export type OriginResult = { ok: true; text: string } | { ok: false; error: SsaiError; reason: OriginErrorReason };

export interface OriginFetcherOptions {
  timeoutMs?: number;
  maxBytes?: number;
  /** how long a fetched playlist is reused; 0 keeps only the single-flight coalescing */
  cacheMs?: number;
  now?: () => number;
  onFetch?: () => void;
  onError?: (reason: OriginErrorReason) => void;
}

export class OriginFetcher {
  private readonly inflight = new Map<string, Promise<OriginResult>>();
  private readonly cache = new Map<string, { at: number; result: OriginResult }>();
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly cacheMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: OriginFetcherOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.maxBytes = opts.maxBytes ?? 2 * 1024 * 1024;
    this.cacheMs = opts.cacheMs ?? 1000;
    this.now = opts.now ?? Date.now;
    this.agent = new Agent({ connections: 64, keepAliveTimeout: 10_000, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
  }

  fetch(url: string): Promise<OriginResult> {
    if (this.cacheMs > 0) {
      const hit = this.cache.get(url);
      if (hit && this.now() - hit.at < this.cacheMs) return Promise.resolve(hit.result);
    }
    let pending = this.inflight.get(url);
    if (!pending) {
      pending = this.load(url).then((result) => {
        if (this.cacheMs > 0 && result.ok) {
          if (this.cache.size > 10_000) this.cache.clear();
          this.cache.set(url, { at: this.now(), result });
        }
        if (!result.ok) this.opts.onError?.(result.reason);
        return result;
      }).finally(() => this.inflight.delete(url));
      this.inflight.set(url, pending);
    }
    return pending;
  }

  private async load(url: string): Promise<OriginResult> {
    this.opts.onFetch?.();
    const fail = (reason: OriginErrorReason, error: SsaiError): OriginResult => ({ ok: false, reason, error });
    try {
      const res = await request(url, { dispatcher: this.agent, signal: AbortSignal.timeout(this.timeoutMs) });
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
      if (!text.replace(/^\uFEFF/, '').trimStart().startsWith('#EXTM3U')) {
        return fail('not_hls', ssaiError('ORIGIN_NOT_HLS', 'the origin body does not start with #EXTM3U'));
      }
      return { ok: true, text };
    } catch (e) {
      const name = e instanceof Error ? e.name : '';
      const code = (e as { code?: string }).code ?? '';
      if (name === 'TimeoutError' || name === 'AbortError' || code.includes('TIMEOUT')) {
        return fail('timeout', ssaiError('ORIGIN_TIMEOUT', `the origin did not answer within ${this.timeoutMs} ms`));
      }
      return fail('connection', ssaiError('ORIGIN_HTTP_ERROR', `the origin could not be reached (${code || name})`));
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
