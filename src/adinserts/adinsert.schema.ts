// Ad-insertion configuration (spec 2.11, 4.6): write fields snake_case, read fields camelCase.
import { z } from 'zod';
import { ADINSERT_TYPES, AVAIL_FILL_POLICIES, AVAIL_SUPPRESSION_MODES, INSERTION_MODES, type AdinsertConfig, type AdPolicies } from '../../kernel/seams/adinserts.js';

/** http(s) URL; `[variables]` of the ad server template (DESIGN.md "Ad playback") are allowed anywhere. */
function httpUrl(withVariables: boolean) {
  return z.string().trim().min(1).max(4096).refine((value) => {
    const candidate = withVariables ? value.replace(/\[[^\]\s]*\]/g, 'x') : value;
    try {
      const url = new URL(candidate);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');
}

// The record and its types are the seam other parts read (kernel/seams/adinserts.ts); re-exported here.
export { ADINSERT_TYPES, INSERTION_MODES, type AdinsertConfig, type AdPolicies, type AdinsertType, type InsertionMode } from '../../kernel/seams/adinserts.js';

const name = z.string().trim().min(1, 'required').max(200);
const type = z.enum(ADINSERT_TYPES, { message: 'live or broker' });
/**
 * The most ad decisions a second one ssai process sends to this ad server (issue 28): a flood of viewers is paced to
 * it, and breaks announced ahead are spread over their lead. Per process: N processes ask N times this at most.
 */
export const MAX_AD_SERVER_RPS = 100_000;
const adServerMaxRps = z.number().int('a whole number of requests per second').min(1, 'at least 1').max(MAX_AD_SERVER_RPS, `at most ${MAX_AD_SERVER_RPS}`);

/** issue 30: stitched (ads in the playlist) or guided (HLS Interstitials) */
const insertionMode = z.enum(INSERTION_MODES, { message: 'stitched or guided' });
/** whether a session may choose the other mode (`ads.mode=` on the playback URL, `insertionMode` in the session body) */
const insertionModeOverride = z.boolean({ message: 'true or false' });

// issue 31: the ad-operations policies. Each is optional; left out, behaviour is today's.
/** the longest break the threshold can speak of: a day */
const MAX_THRESHOLD_SECONDS = 86_400;
/** bumpers are short clips; the pre-roll cap is a few minutes */
export const MAX_LIVE_PREROLL_SECONDS = 600;
const personalizationThresholdSeconds = z.number({ message: 'a number of seconds' }).min(0, 'at least 0').max(MAX_THRESHOLD_SECONDS, `at most ${MAX_THRESHOLD_SECONDS}`);
const hhmmss = z.string().regex(/^\d{2}:[0-5]\d:[0-5]\d$/, 'HH:MM:SS');
const availSuppression = z.object({
  mode: z.enum(AVAIL_SUPPRESSION_MODES, { message: AVAIL_SUPPRESSION_MODES.join(', ') }),
  /** how far from the live edge; default 00:00:00 */
  value: hhmmss.optional(),
  /** default FULL_AVAIL_ONLY */
  fill_policy: z.enum(AVAIL_FILL_POLICIES, { message: AVAIL_FILL_POLICIES.join(' or ') }).optional(),
}).strict();
const livePrerollMaxSeconds = z.number({ message: 'a number of seconds' }).int('whole seconds').min(1, 'at least 1').max(MAX_LIVE_PREROLL_SECONDS, `at most ${MAX_LIVE_PREROLL_SECONDS}`);
const adMarkerPassthrough = z.boolean({ message: 'true or false' });

/** The policy fields of a create (absent: not set) or an update (absent: kept; null: removed). */
const policyFields = {
  personalization_threshold_seconds: personalizationThresholdSeconds.nullable().optional(),
  avail_suppression: availSuppression.nullable().optional(),
  bumper_start_url: httpUrl(false).nullable().optional(),
  bumper_end_url: httpUrl(false).nullable().optional(),
  live_preroll_ad_server: httpUrl(true).nullable().optional(),
  live_preroll_max_seconds: livePrerollMaxSeconds.nullable().optional(),
  ad_marker_passthrough: adMarkerPassthrough.nullable().optional(),
  content_segment_prefix: httpUrl(false).nullable().optional(),
  ad_segment_prefix: httpUrl(false).nullable().optional(),
};
type PolicyInput = { [K in keyof typeof policyFields]?: z.output<(typeof policyFields)[K]> };

function secondsOf(hms: string): number {
  const [h, m, s] = hms.split(':').map(Number) as [number, number, number];
  return h * 3600 + m * 60 + s;
}

function hms(seconds: number): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}

/** The policies after `input` over `current`: an absent field keeps its value, null removes it. */
export function applyPolicies(current: AdPolicies, input: PolicyInput): AdPolicies {
  const next: AdPolicies = { ...current };
  const set = <K extends keyof AdPolicies>(key: K, value: AdPolicies[K] | null | undefined) => {
    if (value === undefined) return;
    if (value === null) delete next[key];
    else next[key] = value;
  };
  set('personalizationThresholdSeconds', input.personalization_threshold_seconds);
  const suppression = input.avail_suppression;
  set('availSuppression', suppression && {
    mode: suppression.mode, valueSeconds: secondsOf(suppression.value ?? '00:00:00'), fillPolicy: suppression.fill_policy ?? 'FULL_AVAIL_ONLY',
  });
  set('bumperStartUrl', input.bumper_start_url);
  set('bumperEndUrl', input.bumper_end_url);
  set('livePrerollAdServer', input.live_preroll_ad_server);
  set('livePrerollMaxSeconds', input.live_preroll_max_seconds);
  set('adMarkerPassthrough', input.ad_marker_passthrough);
  set('contentSegmentPrefix', input.content_segment_prefix);
  set('adSegmentPrefix', input.ad_segment_prefix);
  return next;
}

export const adinsertCreateBody = z.object({
  name,
  slate_ad: httpUrl(false).optional(),
  ad_server: httpUrl(true),
  type,
  source_url: httpUrl(false),
  ad_server_max_rps: adServerMaxRps.optional(),
  insertion_mode: insertionMode.optional(),
  insertion_mode_override: insertionModeOverride.optional(),
  ...policyFields,
});
export type AdinsertCreateInput = z.output<typeof adinsertCreateBody>;

/** PUT: name, ad_server and type required (spec 4.6); slate_ad, source_url and ad_server_max_rps kept when absent. */
export const adinsertUpdateBody = z.object({
  name,
  slate_ad: httpUrl(false).nullable().optional(),
  ad_server: httpUrl(true),
  type,
  source_url: httpUrl(false).optional(),
  /** kept when absent, removed (no cap) with null */
  ad_server_max_rps: adServerMaxRps.nullable().optional(),
  /** kept when absent */
  insertion_mode: insertionMode.optional(),
  insertion_mode_override: insertionModeOverride.optional(),
  /** issue 31: each kept when absent, removed with null */
  ...policyFields,
});
export type AdinsertUpdateInput = z.output<typeof adinsertUpdateBody>;

/** The read shape of spec 2.11 plus slateAd. */
export const adinsertRead = z.object({
  name: z.string(),
  guid: z.string(),
  adServer: z.string(),
  type: z.enum(ADINSERT_TYPES),
  masterEndpoint: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  sourceUrl: z.string(),
  slateAd: z.string().optional(),
  adServerMaxRps: z.number().int().optional(),
  insertionMode: z.enum(INSERTION_MODES),
  insertionModeOverride: z.boolean(),
  personalizationThresholdSeconds: z.number().optional(),
  availSuppression: z.object({ mode: z.enum(AVAIL_SUPPRESSION_MODES), value: z.string(), fillPolicy: z.enum(AVAIL_FILL_POLICIES) }).optional(),
  bumperStartUrl: z.string().optional(),
  bumperEndUrl: z.string().optional(),
  livePrerollAdServer: z.string().optional(),
  livePrerollMaxSeconds: z.number().int().optional(),
  /** true unless set false */
  adMarkerPassthrough: z.boolean(),
  contentSegmentPrefix: z.string().optional(),
  adSegmentPrefix: z.string().optional(),
});
export type AdinsertRead = z.output<typeof adinsertRead>;

/** spec 2.11/DESIGN.md: masterEndpoint = {public_url}/v1/master/{guid}/ */
export function masterEndpoint(publicUrl: string, guid: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/master/${guid}/`;
}

export function toRead(config: AdinsertConfig, publicUrl: string): AdinsertRead {
  const read: AdinsertRead = {
    name: config.name, guid: config.guid, adServer: config.adServer, type: config.type,
    masterEndpoint: masterEndpoint(publicUrl, config.guid), createdAt: config.createdAt, updatedAt: config.updatedAt,
    sourceUrl: config.sourceUrl, insertionMode: config.insertionMode, insertionModeOverride: config.insertionModeOverride,
    adMarkerPassthrough: config.adMarkerPassthrough ?? true,
  };
  if (config.slateAd) read.slateAd = config.slateAd;
  if (config.adServerMaxRps !== undefined) read.adServerMaxRps = config.adServerMaxRps;
  if (config.personalizationThresholdSeconds !== undefined) read.personalizationThresholdSeconds = config.personalizationThresholdSeconds;
  const suppression = config.availSuppression;
  if (suppression) read.availSuppression = { mode: suppression.mode, value: hms(suppression.valueSeconds), fillPolicy: suppression.fillPolicy };
  for (const key of ['bumperStartUrl', 'bumperEndUrl', 'livePrerollAdServer', 'contentSegmentPrefix', 'adSegmentPrefix'] as const) {
    const value = config[key];
    if (value !== undefined) read[key] = value;
  }
  if (config.livePrerollMaxSeconds !== undefined) read.livePrerollMaxSeconds = config.livePrerollMaxSeconds;
  return read;
}
