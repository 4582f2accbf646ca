// Ad-insertion configuration (spec 2.11, 4.6): write fields snake_case, read fields camelCase.
import { z } from 'zod';

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

export const ADINSERT_TYPES = ['live', 'broker'] as const;
export type AdinsertType = (typeof ADINSERT_TYPES)[number];

const name = z.string().trim().min(1, 'required').max(200);
const type = z.enum(ADINSERT_TYPES, { message: 'live or broker' });

export const adinsertCreateBody = z.object({
  name,
  slate_ad: httpUrl(false).optional(),
  ad_server: httpUrl(true),
  type,
  source_url: httpUrl(false),
});
export type AdinsertCreateInput = z.output<typeof adinsertCreateBody>;

/** PUT: name, ad_server and type required (spec 4.6); slate_ad and source_url kept when absent. */
export const adinsertUpdateBody = z.object({
  name,
  slate_ad: httpUrl(false).nullable().optional(),
  ad_server: httpUrl(true),
  type,
  source_url: httpUrl(false).optional(),
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
});
export type AdinsertRead = z.output<typeof adinsertRead>;

/** What the proxy and the live channels need: the stored record with its organization. */
export interface AdinsertConfig {
  guid: string;
  organizationId: string;
  name: string;
  adServer: string;
  type: AdinsertType;
  sourceUrl: string;
  slateAd?: string;
  createdAt: number;
  updatedAt: number;
}

/** spec 2.11/DESIGN.md: masterEndpoint = {public_url}/v1/master/{guid}/ */
export function masterEndpoint(publicUrl: string, guid: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/master/${guid}/`;
}

export function toRead(config: AdinsertConfig, publicUrl: string): AdinsertRead {
  const read: AdinsertRead = {
    name: config.name, guid: config.guid, adServer: config.adServer, type: config.type,
    masterEndpoint: masterEndpoint(publicUrl, config.guid), createdAt: config.createdAt, updatedAt: config.updatedAt,
    sourceUrl: config.sourceUrl,
  };
  if (config.slateAd) read.slateAd = config.slateAd;
  return read;
}
