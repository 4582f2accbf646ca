// Creatives prepared to match the content (issue 5 "Ad decisions", issue 19 point 1): each creative is prepared once
// by the encoder per ladder, kept by creative key in this process and in the shared store, and read as URLs.
import { LRUCache } from 'lru-cache';
import { creativeKey, type PreparedCreative, type TargetLadder } from '../../vod-encoder/prepare-creative.js';
import type { VodResult } from '../../vod-encoder/errors.js';
import { keys, type ContentRung } from './avail-record.js';
import { h264Of, type ContentShape } from '../stitch/content-shape.js';
import { planOf, type CreativePlan } from '../stitch/creative-plan.js';
import type { SessionStore } from '../store/session-store.js';

/** The reason a creative is skipped while it is being prepared (a later break takes it). */
export const CREATIVE_QUEUED = 'not prepared: queued for preparation';

export type PrepareFn = (mediaFileUrl: string, ladder: TargetLadder, creativeId: string) => Promise<VodResult<PreparedCreative>>;

export interface CreativeCacheDeps {
  store: SessionStore;
  /** the encoder's prepareCreative; absent when no worker is reachable (ads are then skipped) */
  prepare: () => PrepareFn | undefined;
  /** public URL of a file of a prepared creative, undefined when the creative is not in the served media store */
  creativeUrl: (dir: string, relPath: string) => string | undefined;
  now: () => number;
  /** how long a playlist request waits for a creative being prepared before skipping it this time */
  creativeWaitMs: number;
}

type CreativeState = { state: 'ready'; plan: CreativePlan } | { state: 'pending'; promise: Promise<CreativePlan | undefined> } | { state: 'failed'; reason: string; at: number };

const FAILED_RETRY_MS = 60_000;

/** Ladder and shape of the content, for creatives prepared to match it (issue 19 point 1). */
export function ladderOf(rungs: ContentRung[], segmentDurationSec: number, shape?: ContentShape): TargetLadder {
  const byHeight = new Map<number, ContentRung>();
  for (const r of rungs) if (r.width > 0 && r.height > 0 && !byHeight.has(r.height)) byHeight.set(r.height, r);
  const list = [...byHeight.values()].sort((a, b) => b.height - a.height);
  if (!list.length) list.push({ width: 1280, height: 720, bandwidth: 3_128_000 });
  const fps = rungs.find((r) => r.frameRate)?.frameRate ?? 30;
  return {
    rungs: list.map((r) => {
      const video = Math.max(200_000, Math.round((r.bandwidth - 128_000) / 1000) * 1000);
      return { width: r.width, height: r.height, videoBitrate: video, maxrate: Math.round(video * 1.07), bufsize: video * 2, ...h264Of(r.codecs) };
    }),
    audioBitrate: 128_000, audioSampleRate: shape?.audioSampleRate ?? 48_000, audioChannels: shape?.audioChannels ?? 2,
    frameRate: Math.min(60, Math.round(fps * 1000) / 1000),
    segmentDurationSec: Math.max(1, Math.round(segmentDurationSec)),
    ...(shape ? { container: shape.container, muxedAudio: shape.muxedAudio } : {}),
  };
}

export class CreativeCache {
  /** by creative key: bounded, a creative dropped here is read again from the store (or prepared again: cached on disk) */
  private readonly creatives = new LRUCache<string, CreativeState>({ max: 10_000 });
  private readonly ladders = new WeakMap<ContentRung[], Map<string, TargetLadder>>();
  private readonly creativeKeys = new WeakMap<TargetLadder, Map<string, string>>();

  constructor(private readonly deps: CreativeCacheDeps) {}

  /**
   * The ladder of a layout (rungs shared by its sessions) and shape, one object per combination: with it, a creative's
   * key is hashed once per ladder, not per decision (two SHA-1s of the ladder's JSON each: issue 19 point 4).
   */
  ladderFor(rungs: ContentRung[], targetDuration: number, shape?: ContentShape): TargetLadder {
    let byShape = this.ladders.get(rungs);
    if (!byShape) { byShape = new Map(); this.ladders.set(rungs, byShape); }
    const k = `${targetDuration} ${shape ? JSON.stringify(shape) : ''}`;
    let ladder = byShape.get(k);
    if (!ladder) {
      if (byShape.size >= 64) byShape.clear();
      ladder = ladderOf(rungs, targetDuration, shape);
      byShape.set(k, ladder);
    }
    return ladder;
  }

  private keyOf(creativeId: string, mediaFileUrl: string, ladder: TargetLadder): string {
    let keys = this.creativeKeys.get(ladder);
    if (!keys) { keys = new Map(); this.creativeKeys.set(ladder, keys); }
    const k = `${creativeId}\n${mediaFileUrl}`;
    let key = keys.get(k);
    if (key === undefined) {
      if (keys.size >= 1000) keys.clear(); // personalised creative ids would grow it without end
      key = creativeKey(creativeId, mediaFileUrl, ladder);
      keys.set(k, key);
    }
    return key;
  }

  /** The creative as URLs, or the reason it is skipped this time (it is queued for preparation). */
  async creative(mediaFileUrl: string, ladder: TargetLadder, creativeId: string): Promise<CreativePlan | string> {
    return this.prepared(this.keyOf(creativeId, mediaFileUrl, ladder), () => {
      const prepare = this.deps.prepare();
      return prepare && (() => prepare(mediaFileUrl, ladder, creativeId));
    });
  }

  /**
   * A creative (or slate) as URLs by key: from this process, the shared store, or prepared now by `starter`'s job
   * (waiting creativeWaitMs at most; a later request picks up the result). `starter` gives undefined without an encoder.
   */
  async prepared(key: string, starter: () => (() => Promise<VodResult<PreparedCreative>>) | undefined, waitMs = this.deps.creativeWaitMs): Promise<CreativePlan | string> {
    const local = this.creatives.get(key);
    if (local?.state === 'ready') return local.plan;
    if (local?.state === 'failed' && this.deps.now() - local.at < FAILED_RETRY_MS) return `failed: ${local.reason}`;
    const shared = await this.deps.store.get<CreativePlan>(keys.creative(key));
    if (shared) { this.creatives.set(key, { state: 'ready', plan: shared }); return shared; }
    let promise: Promise<CreativePlan | undefined>;
    if (local?.state === 'pending') promise = local.promise;
    else {
      const start = starter();
      if (!start) return 'not prepared: no encoder available';
      // Never rejects: a rejection would stay in 'pending' and fail every later request for this creative.
      promise = start().then(async (r) => {
        if (!r.ok) { this.creatives.set(key, { state: 'failed', reason: r.error.reason || r.error.message, at: this.deps.now() }); return undefined; }
        const plan = planOf(key, r.value, this.deps.creativeUrl);
        if (!plan) { this.creatives.set(key, { state: 'failed', reason: 'prepared outside the served media store', at: this.deps.now() }); return undefined; }
        await this.deps.store.set(keys.creative(key), plan, 7 * 24 * 3_600_000);
        this.creatives.set(key, { state: 'ready', plan });
        return plan;
      }).catch((e: unknown) => {
        this.creatives.set(key, { state: 'failed', reason: e instanceof Error ? e.message : String(e), at: this.deps.now() });
        return undefined;
      });
      this.creatives.set(key, { state: 'pending', promise });
    }
    const plan = await Promise.race([promise, new Promise<'wait'>((r) => setTimeout(() => r('wait'), waitMs).unref())]);
    if (plan === 'wait') return CREATIVE_QUEUED;
    if (!plan) {
      const s = this.creatives.get(key);
      return `failed: ${s?.state === 'failed' ? s.reason : 'unknown'}`;
    }
    return plan;
  }

  /** Reads the plan of a creative for segment redirects (immutable: cached in this process). */
  /** The plan when this process holds it ready, without a store read (the playlist's hot path); else undefined. */
  planNow(key: string): CreativePlan | undefined {
    const local = this.creatives.get(key);
    return local?.state === 'ready' ? local.plan : undefined;
  }

  async plan(key: string): Promise<CreativePlan | undefined> {
    const local = this.creatives.get(key);
    if (local?.state === 'ready') return local.plan;
    const shared = await this.deps.store.get<CreativePlan>(keys.creative(key));
    if (shared) this.creatives.set(key, { state: 'ready', plan: shared });
    return shared;
  }
}
