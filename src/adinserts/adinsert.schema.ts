// Ad-insertion configuration (spec 2.11, 4.6): write fields snake_case, read fields camelCase.
import { z } from 'zod';
import { ADINSERT_TYPES, INSERTION_MODES, type AdinsertConfig } from '../../kernel/seams/adinserts.js';

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
export { ADINSERT_TYPES, INSERTION_MODES, type AdinsertConfig, type AdinsertType, type InsertionMode } from '../../kernel/seams/adinserts.js';

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

export const adinsertCreateBody = z.object({
  name,
  slate_ad: httpUrl(false).optional(),
  ad_server: httpUrl(true),
  type,
  source_url: httpUrl(false),
  ad_server_max_rps: adServerMaxRps.optional(),
  insertion_mode: insertionMode.optional(),
  insertion_mode_override: insertionModeOverride.optional(),
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
  };
  if (config.slateAd) read.slateAd = config.slateAd;
  if (config.adServerMaxRps !== undefined) read.adServerMaxRps = config.adServerMaxRps;
  return read;
}
