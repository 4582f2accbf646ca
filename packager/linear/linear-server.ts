// GET {public_url}/linear/{channel}/{token}/master.m3u8 | v{j}.m3u8 | audio.m3u8: a virtual channel as live HLS, served
// on plain node:http before Express like the SSAI proxy. Stateless per request: the answer is a function of the
// schedule and the clock (cut to the second), so any number of processes answer the same bytes.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { makeAsset, type LinearAsset } from './asset.js';
import type { AssetCache } from './asset-loader.js';
import { buildModel, variantPick, type ChannelModel } from './channel-model.js';
import { ANNOUNCE_AHEAD_MS, renderMaster, renderMedia } from './render.js';
import type { LinearScheduleSource } from '../../kernel/seams/linear-schedule.js';
import { RAW_SECURITY_HEADERS } from '../../kernel/http/raw-security-headers.js';

export const LINEAR_PATH = '/linear/';
/** segments in a media playlist: 15 × 4 s, a minute: room for players that fall behind the edge on a slow machine */
const WINDOW_SEGMENTS = 15;
const PATH = /^\/linear\/([A-Za-z0-9-]{1,64})\/([A-Za-z0-9_-]{1,64})\/(master|audio|v(\d{1,2}))\.m3u8$/;

export interface LinearServerOptions {
  source: LinearScheduleSource;
  assets: AssetCache;
  slate: () => Promise<LinearAsset>;
  now: () => number;
  logger: Logger;
  registry: Registry;
  /** how long a built model serves before the schedule is read again (other processes' writes), ms */
  modelTtlMs?: number;
  /** segments per media playlist (default 15) */
  windowSegments?: number;
  /** how long before its start a break is announced by a DATERANGE (default ANNOUNCE_AHEAD_MS, 30 s) */
  announceAheadMs?: number;
}

export interface LinearAnswer { status: number; body: string; type: string }

const M3U8 = 'application/vnd.apple.mpegurl';
// Flat header lists built once (the hot path writes them as they are); playlists change each segment: 1 s of caching.
const CORS = ['access-control-allow-origin', '*', 'access-control-allow-methods', 'GET, HEAD, OPTIONS', 'access-control-allow-headers', '*', ...RAW_SECURITY_HEADERS];
const OK_M3U8 = [...CORS, 'content-type', M3U8, 'cache-control', 'max-age=1'];
const OK_JSON = [...CORS, 'content-type', 'application/json', 'cache-control', 'max-age=1'];
const FAILED = [...CORS, 'content-type', 'application/json', 'cache-control', 'no-store'];

interface CachedModel {
  built: number;
  model: Promise<ChannelModel | undefined>;
  /** set once `model` resolved: requests then answer without awaiting */
  ready?: ChannelModel | undefined;
  settled?: boolean;
  rendered: Map<string, string>;
  refreshing?: boolean;
}

export class LinearServer {
  private readonly models = new Map<string, CachedModel>();
  private readonly tokens = new Map<string, string>();
  private readonly served: Counter<'kind' | 'status'>;
  private readonly builds: Histogram;

  constructor(private readonly opts: LinearServerOptions) {
    this.served = new Counter({ name: 'linear_playlists_served_total', help: 'Virtual channel playlists by kind and status', labelNames: ['kind', 'status'] as const, registers: [opts.registry] });
    this.builds = new Histogram({ name: 'linear_model_build_seconds', help: 'Time to read a virtual channel schedule and build its timeline', buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2], registers: [opts.registry] });
  }

  /** Forget built models (after a write in this process); without a guid every channel's. */
  invalidate(channelGuid?: string): void {
    if (channelGuid) this.models.delete(channelGuid);
    else this.models.clear();
  }

  /**
   * The channel's model; an expired one keeps answering while its successor is built (requests never wait on a rebuild
   * once a channel has been read), and the successor replaces it when ready.
   */
  private entry(guid: string): CachedModel {
    const wall = Date.now();
    const cached = this.models.get(guid);
    if (cached && wall - cached.built < (this.opts.modelTtlMs ?? 2000)) return cached;
    if (cached) {
      if (!cached.refreshing) {
        cached.refreshing = true;
        const next = this.build(guid);
        // Only over the entry it refreshes: an invalidate() since then has the newer schedule.
        next.then((ready) => {
          if (this.models.get(guid) === cached) this.models.set(guid, { built: Date.now(), model: next, ready, settled: true, rendered: new Map() });
        },
          () => { cached.refreshing = false; });
      }
      return cached;
    }
    const model = this.build(guid);
    const fresh: CachedModel = { built: wall, model, rendered: new Map() };
    model.then((ready) => { fresh.ready = ready; fresh.settled = true; }, () => { if (this.models.get(guid) === fresh) this.models.delete(guid); });
    this.models.set(guid, fresh);
    if (this.models.size > 10_000) this.models.delete(this.models.keys().next().value!);
    return fresh;
  }

  private build(guid: string): Promise<ChannelModel | undefined> {
    const stop = this.builds.startTimer();
    const model = (async () => {
      const schedule = await this.opts.source.load(guid);
      if (!schedule) return undefined;
      const locate = async (vod: string) => {
        const loc = await this.opts.source.locate(vod);
        return loc ? this.opts.assets.get(loc).catch((error: unknown) => {
          this.opts.logger.warn({ channel: guid, vod, err: error }, 'a VOD of a virtual channel cannot be read; it is left out');
          return undefined;
        }) : undefined;
      };
      const slate = await this.opts.slate().catch(() => makeAsset('slate', [], undefined));
      return buildModel(schedule, locate, slate);
    })().finally(() => stop());
    return model;
  }

  private token(guid: string): string {
    let token = this.tokens.get(guid);
    if (token === undefined) {
      token = this.opts.source.token(guid);
      if (this.tokens.size > 100_000) this.tokens.clear();
      this.tokens.set(guid, token);
    }
    return token;
  }

  /** The answer to one playlist path (exported for tests and the bench). */
  async answer(path: string): Promise<LinearAnswer> {
    const quick = this.answerNow(path);
    if (quick) return quick;
    return this.answerAfterBuild(path);
  }

  /** Answers at once when the channel's model is built (the hot path: no promise), else undefined. */
  answerNow(path: string): LinearAnswer | undefined {
    const m = PATH.exec(path);
    if (!m) return undefined;
    const entry = this.models.get(m[1]!);
    if (!entry?.settled || Date.now() - entry.built >= (this.opts.modelTtlMs ?? 2000)) return undefined;
    return this.respond(m, entry, entry.ready);
  }

  private async answerAfterBuild(path: string): Promise<LinearAnswer> {
    const m = PATH.exec(path);
    const notFound = (what: string): LinearAnswer => ({ status: 404, type: 'application/json', body: JSON.stringify({ status: false, code: 'NOT_FOUND', description: what }) });
    if (!m) return notFound('no such linear playlist');
    const [, guid, token] = m as unknown as [string, string, string];
    // A wrong token never costs a schedule read.
    const expected = this.token(guid);
    if (expected.length !== token.length || !timingSafeEqual(Buffer.from(expected), Buffer.from(token))) return notFound(`virtual channel ${guid} does not exist`);
    const entry = this.entry(guid);
    return this.respond(m, entry, await entry.model);
  }

  private respond(m: RegExpExecArray, entry: CachedModel, model: ChannelModel | undefined): LinearAnswer {
    const notFound = (what: string): LinearAnswer => ({ status: 404, type: 'application/json', body: JSON.stringify({ status: false, code: 'NOT_FOUND', description: what }) });
    const [, guid, token, file, variant] = m as unknown as [string, string, string, string, string | undefined];
    const expected = this.token(guid);
    if (expected.length !== token.length || !timingSafeEqual(Buffer.from(expected), Buffer.from(token))) return notFound(`virtual channel ${guid} does not exist`);
    if (!model) return notFound(`virtual channel ${guid} does not exist`);
    const type = M3U8;
    if (file === 'master') return { status: 200, type, body: renderMaster(model.variants, model.withAudio) };
    const j = variant === undefined ? -1 : Number(variant);
    if (j >= model.variants.length || (j < 0 && !model.withAudio)) return notFound(`channel ${guid} has no ${file}.m3u8`);
    // Cut to the second: every process asked within the same second answers the same window.
    const tick = Math.floor(this.opts.now() / 1000) * 1000;
    const key = `${file}|${tick}`;
    const rendered = entry.rendered;
    const hit = rendered.get(key);
    if (hit !== undefined) return { status: 200, type, body: hit };
    const count = this.opts.windowSegments ?? WINDOW_SEGMENTS;
    const announceMs = this.opts.announceAheadMs ?? ANNOUNCE_AHEAD_MS;
    const window = model.timeline.liveWindow(tick, count, (count + 2) * model.targetDuration * 1000, announceMs);
    const body = renderMedia(window, j >= 0 ? variantPick(j) : (a) => a.audio, model.targetDuration, announceMs);
    if (rendered.size >= 16) rendered.clear();
    rendered.set(key, body);
    return { status: 200, type, body };
  }

  handler(): (req: IncomingMessage, res: ServerResponse) => boolean {
    return (req, res) => {
      const url = req.url ?? '';
      if (!url.startsWith(LINEAR_PATH)) return false;
      if (req.method === 'OPTIONS') return void res.writeHead(204, CORS).end(), true;
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const kind = path.endsWith('master.m3u8') ? 'master' : 'media';
      const send = (a: LinearAnswer) => {
        this.served.inc({ kind, status: String(a.status) });
        res.writeHead(a.status, a.status === 200 ? (a.type === M3U8 ? OK_M3U8 : OK_JSON) : FAILED);
        res.end(req.method === 'HEAD' ? undefined : a.body);
      };
      const quick = this.answerNow(path);
      if (quick) return send(quick), true;
      this.answer(path).then(send, (error: unknown) => {
        this.served.inc({ kind, status: '500' });
        this.opts.logger.error({ err: error, path }, 'linear playlist failed');
        res.writeHead(500, FAILED).end(JSON.stringify({ status: false, code: 'INTERNAL', description: 'Internal error' }));
      });
      return true;
    };
  }
}
