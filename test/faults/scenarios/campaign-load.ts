// The whole load of the fault campaign (issue 32), for any scenario to run while it injects its fault: simulated players
// of a live SSAI stream, each with its own session and its own ads (reloading once per target duration, fetching their
// new ad segments so the beacons fire), a live channel on a packager (its playlist read), VOD encodes (a short generated
// clip uploaded through the API, once or every so often) and a notification subscription (a webhook receiver counting
// deliveries). Every answer is counted by kind and status with its time; failures are kept one by one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../../fixtures/origin-server.js';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { WebhookReceiver } from '../../api/notifications/receivers.js';
import { tinyBlueprint } from '../../e2e/live/live-helpers.js';
import { variantUrls } from '../../ssai/setup.js';
import { until } from '../../cluster/cluster.js';
import { alive, request, type Answer, type OutageCluster } from '../outage-cluster.js';
import type { EngineProcess } from '../../helpers/engine-process.js';
import { startWorld, type CampaignWorld } from './campaign-world.js';

export type AnswerKind = 'playlist' | 'segment' | 'channel' | 'api' | 'upload';

/** One answer of the load: its kind, when it was asked (ms since the epoch), its status (0: no answer) and latency. */
export interface Recorded {
  kind: AnswerKind;
  at: number;
  status: number;
  ms: number;
  /** for a failure: what was asked */
  what?: string;
  /** for a retried answer: the engine's error code (its JSON body), 'no code' without one */
  code?: string;
}

export interface CampaignLoadOptions {
  viewers: number;
  /** ms between two uploads (the soak: 60,000); 0: only those asked for with upload() */
  uploadEveryMs?: number;
  /** a break every this many loops of the origin's 20 s clip (1: every 20 s; 6: every 2 minutes) */
  breakEveryLoops?: number;
  /** keep every answer in `answers` (a test's scale); otherwise only the counts and the failures */
  keepAnswers?: boolean;
  /** the origin and the ad server in a process of their own (campaign-world.ts): what a bench's scale needs */
  worldInChild?: boolean;
  log?: (line: string) => void;
}

const PERIOD_MS = SEGMENT_SECONDS * 1000;
/**
 * A player's fragment retries (hls.js 1.x fragLoadPolicy.errorRetry: 6 more tries after a 5xx or no answer, 1 s
 * doubling to 8 s): a segment failed for the viewer only when the last try did.
 */
const SEGMENT_RETRY = { maxNumRetry: 6, retryDelayMs: 1000, maxRetryDelayMs: 8000 };
const retryDelayMs = (retry: number): number => Math.min(SEGMENT_RETRY.retryDelayMs * 2 ** retry, SEGMENT_RETRY.maxRetryDelayMs);
const LOOP_MS = CLIP_SEGMENTS * SEGMENT_SECONDS * 1000;

/** The media sequence number of a media playlist's last segment (no EXT-X-MEDIA-SEQUENCE: 0, RFC 8216 4.4.3.2). */
export function lastSegmentNumber(text: string): number {
  const segments = text.split('\n').filter((line) => line.trim() && !line.startsWith('#')).length;
  return Number(/^#EXT-X-MEDIA-SEQUENCE:(\d+)/m.exec(text)?.[1] ?? 0) + segments - 1;
}

/** A metric's value summed over its series (label sets matched by `name` as a regular expression prefix). */
export function metricSum(text: string, name: string): number {
  return [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
}

export class CampaignLoad {
  /** counts by `${kind} ${status}` */
  readonly counts = new Map<string, number>();
  readonly failures: Recorded[] = [];
  /** segment answers that failed and were tried again as a player does (the viewer's answer is the last try's) */
  readonly retried: Recorded[] = [];
  readonly answers: Recorded[] = [];
  /** the VOD assets uploaded: guid, when the upload was answered */
  readonly uploads: Array<{ guid: string; at: number }> = [];
  readonly receiver = new WebhookReceiver();
  organizationId = '';
  adinsertGuid = '';
  channelId = '';
  channelPlaylistUrl = '';
  /** the channel's last segment number seen, and how often it went backwards */
  channelLastSegment = -1;
  channelRegressions = 0;
  /** the viewers' media playlist paths (on any ssai process), one session each */
  readonly viewerPaths: string[] = [];
  /** playlists answered 200 with ad segments in them, by the second they were asked (for "ads are back") */
  lastAdsAt = 0;
  private stopped = false;
  private readonly loops: Promise<unknown>[] = [];
  private readonly pools = new Map<string, Pool>();
  private clip = '';
  private mediaDir = '';
  private next = 0;

  private constructor(readonly cluster: OutageCluster, readonly world: CampaignWorld, readonly options: CampaignLoadOptions) {}

  /** Starts the fixtures (origin, ad server, webhook receiver) and every part of the load on the cluster given. */
  static async start(cluster: OutageCluster, options: CampaignLoadOptions): Promise<CampaignLoad> {
    const world = await startWorld({ breakEveryLoops: options.breakEveryLoops ?? 1, inChild: options.worldInChild ?? false });
    const load = new CampaignLoad(cluster, world, options);
    try {
      await load.receiver.start();
      await load.subscribe();
      await load.startChannel();
      await load.makeSessions();
      load.mediaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'campaign-media-'));
      load.clip = await generateMedia('clip', path.join(load.mediaDir, 'upload.mp4'), { seconds: 2, size: '160x90' });
    } catch (error) {
      await load.close();
      throw error;
    }
    load.loops.push(load.viewersLoop(), load.channelLoop());
    if (options.uploadEveryMs) load.loops.push(load.uploadLoop(options.uploadEveryMs));
    return load;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  private record(kind: AnswerKind, at: number, status: number, what?: string): void {
    const key = `${kind} ${status}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const answer: Recorded = { kind, at, status, ms: Date.now() - at };
    if (status === 0 || status >= 500) this.failures.push({ ...answer, what });
    if (this.options.keepAnswers) this.answers.push(answer);
  }

  /** How many answers of `kind` (every kind: undefined) had a status for which `match` holds. */
  count(kind: AnswerKind | undefined, match: (status: number) => boolean): number {
    let n = 0;
    for (const [key, value] of this.counts) {
      const [k, status] = key.split(' ');
      if ((kind === undefined || k === kind) && match(Number(status))) n += value;
    }
    return n;
  }

  async api(method: string, url: string, body?: unknown): Promise<Answer> {
    const at = Date.now();
    const answer = await request(`${this.cluster.balancer.url}${url}`, {
      method, headers: { 'content-type': 'application/json', ...this.cluster.auth }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).catch(() => ({ status: 0, text: '', headers: new Headers() }));
    this.record('api', at, answer.status, `${method} ${url}`);
    return answer;
  }

  private async subscribe(): Promise<void> {
    const [row] = await this.cluster.postgres.query<{ id: string }>('select id from organizations');
    this.organizationId = row!.id;
    const subscribed = await this.api('POST', `/organizations/${this.organizationId}/notification-subscriptions`, { endpoint: this.receiver.url, type: 'https' });
    if (subscribed.status !== 201) throw new Error(`the subscription answered ${subscribed.status}: ${subscribed.text}`);
    const confirmation = await this.receiver.waitFor('the subscription confirmation', (r) => r.json.Type === 'SubscriptionConfirmation', 60_000);
    const confirmed = await request(confirmation.json.SubscribeURL as string);
    if (confirmed.status !== 200) throw new Error(`confirming the subscription answered ${confirmed.status}`);
  }

  private async startChannel(): Promise<void> {
    const created = await this.api('POST', '/workflows', { name: 'Campaign channel', blueprint: tinyBlueprint('mp4-loop-test') });
    if (created.status !== 200) throw new Error(`the workflow answered ${created.status}: ${created.text}`);
    this.channelId = (JSON.parse(created.text) as { id: string }).id;
    const started = await this.api('POST', '/channels', { workflows: [this.channelId] });
    if (started.status !== 200) throw new Error(`the channel start answered ${started.status}: ${started.text}`);
    // the packager makes the blueprint's sample clip first, then starts the channel
    const running = await until('the campaign channel to run', 240_000, async () => {
      const read = await this.api('GET', `/channels/${this.channelId}`);
      if (read.status !== 200) return undefined;
      const channel = JSON.parse(read.text) as { channelStatus: string; outputs: Array<{ url: string }> };
      if (channel.channelStatus === 'START_FAILED') throw new Error(`the campaign channel did not start: ${read.text}`);
      return channel.channelStatus === 'RUNNING' ? channel : undefined;
    });
    const multivariantUrl = running.outputs[0]!.url;
    const multivariant = await until('the channel\'s multivariant playlist', 60_000, async () => {
      const answer = await request(multivariantUrl).catch(() => undefined);
      return answer?.status === 200 ? answer.text : undefined;
    });
    this.channelPlaylistUrl = new URL(variantUrls(multivariant)[0]!, multivariantUrl).href;
    this.log(`channel ${this.channelId} running, its playlist ${this.channelPlaylistUrl}`);
  }

  /** The live ssai processes, for the viewers' round robin (a balancer's): a killed one is left out. */
  private ssai(): EngineProcess[] {
    return this.cluster.ssai.filter(alive);
  }

  private pool(url: string): Pool {
    let pool = this.pools.get(url);
    if (!pool) {
      pool = new Pool(url, { connections: Math.max(8, Math.ceil(this.options.viewers / 20)), keepAliveTimeout: 30_000, headersTimeout: 15_000, bodyTimeout: 15_000 });
      this.pools.set(url, pool);
    }
    return pool;
  }

  /** One GET of a path from the next ssai process, round robin. */
  private async get(pathname: string): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
    const processes = this.ssai();
    const target = processes[this.next++ % Math.max(1, processes.length)];
    if (!target) return { status: 0, text: '', headers: {} };
    const answer = await this.pool(target.url).request({ path: pathname, method: 'GET' });
    return { status: answer.statusCode, text: await answer.body.text(), headers: answer.headers };
  }

  private async makeSessions(): Promise<void> {
    const made = await this.api('POST', '/broker/adinserts', {
      name: 'campaign', type: 'live', ad_server: `${this.world.vastUrl}/vast-viewer?sid=[session.id]`, source_url: `${this.world.originUrl}/`,
    });
    if (made.status !== 200) throw new Error(`the configuration answered ${made.status}: ${made.text}`);
    this.adinsertGuid = (JSON.parse(made.text) as { guid: string }).guid;
    let next = 0;
    const viewers = this.options.viewers;
    await Promise.all(Array.from({ length: Math.min(32, viewers) }, async () => {
      while (next < viewers) {
        next++;
        // a proxy whose Redis connection is not up yet (a loaded machine: its first connect may time out) gives the
        // origin's own playlist and no session: asked again until it makes one
        const variant = await until('a session', 60_000, async () => {
          const master = await this.get(`/v1/master/${this.adinsertGuid}/live/master.m3u8`);
          const found = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`));
          if (master.status !== 200) throw new Error(`a session answered ${master.status}: ${master.text.slice(0, 300)}`);
          return found?.startsWith('/v1/manifest/') ? found : undefined;
        });
        this.viewerPaths.push(variant);
      }
    }));
    this.log(`${viewers} sessions made`);
  }

  /** A segment fetched as a player does, retried after a 5xx or no answer (SEGMENT_RETRY); the last try's status. */
  private async segmentAsPlayer(uri: string): Promise<number> {
    for (let retry = 0; ; retry++) {
      const at = Date.now();
      const answer = await this.get(uri).catch(() => ({ status: 0, text: '' }));
      const status = answer.status;
      if ((status !== 0 && status < 500) || retry === SEGMENT_RETRY.maxNumRetry || this.stopped) return status;
      // the error's code (the engine answers JSON), for telling a documented store-outage answer from another
      const code = /"code"\s*:\s*"([A-Z_]+)"/.exec(answer.text)?.[1] ?? 'no code';
      this.retried.push({ kind: 'segment', at, status, ms: Date.now() - at, what: uri, code });
      await new Promise((r) => setTimeout(r, retryDelayMs(retry)));
    }
  }

  /** Open loop: viewer i reloads at its own phase once per target duration; a slow answer does not delay the next. */
  private async viewersLoop(): Promise<void> {
    const n = this.viewerPaths.length;
    const seen: string[][] = this.viewerPaths.map(() => []);
    const inflight = new Set<Promise<void>>();
    const fire = (i: number) => {
      const at = Date.now();
      const p = (async () => {
        try {
          const answer = await this.get(this.viewerPaths[i]!);
          this.record('playlist', at, answer.status, this.viewerPaths[i]);
          if (answer.status !== 200) return;
          const uris = answer.text.split('\n').filter((l) => l && !l.startsWith('#'));
          const ads = uris.filter((u) => u.startsWith('/v1/segment/'));
          if (ads.length > 0) this.lastAdsAt = Math.max(this.lastAdsAt, at);
          // a player fetches the new segments at the live edge once: an ad segment is a redirect that fires its beacons
          for (const uri of uris.slice(-3)) {
            if (!uri.startsWith('/v1/segment/') || seen[i]!.includes(uri)) continue;
            seen[i]!.push(uri);
            if (seen[i]!.length > 8) seen[i]!.shift();
            const segmentAt = Date.now();
            this.record('segment', segmentAt, await this.segmentAsPlayer(uri), uri);
          }
        } catch {
          this.record('playlist', at, 0, this.viewerPaths[i]);
        }
      })();
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    };
    const t0 = Date.now();
    let round = 0;
    let cursor = 0;
    while (!this.stopped) {
      const now = Date.now();
      for (;;) {
        const at = t0 + round * PERIOD_MS + (cursor * PERIOD_MS) / n;
        if (at > now) break;
        fire(cursor);
        if (++cursor === n) { cursor = 0; round++; }
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(inflight);
  }

  /** The channel's first rendition, read once per target duration through the balancer, as a player would. */
  private async channelLoop(): Promise<void> {
    while (!this.stopped) {
      const at = Date.now();
      const answer = await request(`${this.channelPlaylistUrl}`, {}, 10_000).catch(() => ({ status: 0, text: '' }));
      this.record('channel', at, answer.status, this.channelPlaylistUrl);
      if (answer.status === 200) {
        const last = lastSegmentNumber(answer.text);
        if (last < this.channelLastSegment) this.channelRegressions++;
        this.channelLastSegment = Math.max(this.channelLastSegment, last);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, PERIOD_MS - (Date.now() - at))));
    }
  }

  private async uploadLoop(everyMs: number): Promise<void> {
    while (!this.stopped) {
      const at = Date.now();
      await this.upload().catch((error: unknown) => this.log(`upload failed: ${String(error)}`));
      while (!this.stopped && Date.now() - at < everyMs) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** One VOD asset: its metadata, then the clip uploaded through the API (which queues its encode). */
  async upload(title = `campaign upload ${this.uploads.length + 1}`): Promise<string> {
    const meta = await this.api('POST', '/broker/vod/meta', { title });
    if (meta.status !== 200 && meta.status !== 201) throw new Error(`vod meta answered ${meta.status}: ${meta.text}`);
    const guid = (JSON.parse(meta.text) as { data: { guid: string } }).data.guid;
    const at = Date.now();
    const answer = await request(`${this.cluster.balancer.url}/broker/vod/upload/${guid}`, {
      method: 'POST', headers: { ...this.cluster.auth, 'content-type': 'video/mp4' }, body: fs.readFileSync(this.clip),
    }, 60_000).catch(() => ({ status: 0, text: '' }));
    this.record('upload', at, answer.status, guid);
    if (answer.status !== 200) throw new Error(`the upload answered ${answer.status}: ${answer.text}`);
    this.uploads.push({ guid, at: Date.now() });
    return guid;
  }

  /** An uploaded asset's encode status (complete, failed, ...), or undefined while the API cannot say. */
  async encodeStatus(guid: string): Promise<string | undefined> {
    const read = await this.api('GET', `/broker/vod/list/${guid}/info`);
    if (read.status !== 200) return undefined;
    const body = JSON.parse(read.text) as { status?: string; data?: { status?: string } };
    return body.data?.status ?? body.status;
  }

  /** Fill over every ssai process: seconds of avails filled with ads over seconds of avails decided. */
  async fill(): Promise<{ availSeconds: number; filledSeconds: number }> {
    let availSeconds = 0;
    let filledSeconds = 0;
    for (const p of this.ssai()) {
      const text = (await request(`${p.url}/metrics`)).text;
      availSeconds += metricSum(text, 'ssai_avail_seconds_total');
      filledSeconds += metricSum(text, 'ssai_avail_filled_seconds_total');
    }
    return { availSeconds, filledSeconds };
  }

  /**
   * What explains unfilled avails, summed over the ssai processes by series (labels kept): ad requests, failed
   * decisions by reason, decisions late, creatives skipped, breaks left unpersonalised.
   */
  async decisionCounters(): Promise<Record<string, number>> {
    const names = ['ssai_ad_server_requests_total', 'ssai_ad_server_errors_total', 'ssai_decisions_late_total', 'ssai_decisions_ahead_late_total', 'ssai_creatives_skipped_total', 'ssai_breaks_unpersonalised_total'];
    const sums: Record<string, number> = {};
    for (const p of this.ssai()) {
      const text = (await request(`${p.url}/metrics`)).text;
      for (const m of text.matchAll(/^(ssai_[a-z_]+(?:\{[^}]*\})?) (\d+(?:\.\d+)?(?:e[+-]?\d+)?)$/gm)) {
        if (names.some((n) => m[1] === n || m[1]!.startsWith(`${n}{`))) sums[m[1]!] = (sums[m[1]!] ?? 0) + Number(m[2]);
      }
    }
    return sums;
  }

  /** The notifications received, by MessageId: a MessageId received twice is a doubled delivery. */
  deliveries(): { byMessage: Map<string, number>; doubled: number } {
    const byMessage = new Map<string, number>();
    for (const r of this.receiver.notifications()) {
      const id = String(r.json.MessageId);
      byMessage.set(id, (byMessage.get(id) ?? 0) + 1);
    }
    return { byMessage, doubled: [...byMessage.values()].filter((n) => n > 1).length };
  }

  /** Waits for the viewers' playlists to carry ads (the worker prepares the creatives for the first break). */
  async waitForAds(timeoutMs = 240_000, after = Date.now()): Promise<number> {
    try {
      await until('the viewers\' playlists to carry ads', timeoutMs, async () => (this.lastAdsAt > after ? true : undefined));
    } catch (error) {
      // what the cluster did meanwhile, for the failure to say why
      const { availSeconds, filledSeconds } = await this.fill().catch(() => ({ availSeconds: -1, filledSeconds: -1 }));
      const creatives = this.cluster.workers.flatMap((p) => p.logs).filter((line) => line.includes('creative')).slice(-5);
      throw new Error(`${String(error)}; avail seconds ${availSeconds}, filled ${filledSeconds}, `
        + `playlists ${this.count('playlist', () => true)} (${this.failures.length} failed); workers' last creative lines:\n${creatives.join('\n')}`);
    }
    return (this.lastAdsAt - after) / 1000;
  }

  /** Milliseconds of one origin loop (a break at most every loop). */
  static readonly loopMs = LOOP_MS;

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  async close(): Promise<void> {
    await this.stop();
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    await Promise.all([this.receiver.stop(), this.world.close()]);
    if (this.mediaDir) fs.rmSync(this.mediaDir, { recursive: true, force: true });
  }
}
