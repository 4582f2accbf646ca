// Broker channel (spec 2.8, 4.3): body rules that need no database; references are checked by the router.
import { z } from 'zod';
import { attachedMetaShape } from '../meta-groups/attached-meta.js';

export const CHANNEL_TYPES = ['externalHLS', 'virtual'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export const binary = z.union([z.literal(0), z.literal(1)], { message: 'must be 0 or 1' });

/** http(s) URL; with `m3u8` its path must end in .m3u8 (spec 2.8: a link to an HLS master manifest). */
export function httpUrl(opts: { m3u8?: boolean } = {}) {
  return z.string().trim().min(1).max(4096).refine((value) => {
    try {
      const url = new URL(value);
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return false;
      return !opts.m3u8 || url.pathname.toLowerCase().endsWith('.m3u8');
    } catch {
      return false;
    }
  }, opts.m3u8 ? 'must be an http(s) URL of an .m3u8 playlist' : 'must be an http(s) URL');
}

const guidList = z.array(z.string().min(1).max(64)).max(1000);

export const channelBody = z.object({
  name: z.string().trim().min(1, 'required').max(200),
  description: z.string().max(10_000),
  active: binary,
  type: z.enum(CHANNEL_TYPES, { message: 'externalHLS or virtual' }),
  externalUrl: httpUrl({ m3u8: true }).optional(),
  hasAds: binary,
  adinsert: z.string().min(1).max(64).optional(),
  allowedForUsers: guidList.optional(),
  allowedForRoles: guidList.optional(),
  restrictedFor: guidList.optional(),
  /** hours back from the end of the schedule that the channel replays after its last listing */
  loopInterval: z.number().positive('must be a positive number of hours').max(24 * 366).optional(),
  imageUrl: httpUrl().optional(),
  ...attachedMetaShape,
}).superRefine((c, check) => {
  if (c.type === 'externalHLS' && c.externalUrl === undefined) {
    check.addIssue({ code: 'custom', path: ['externalUrl'], message: 'is required when type is externalHLS' });
  }
  if (c.type === 'virtual' && c.externalUrl !== undefined) {
    check.addIssue({ code: 'custom', path: ['externalUrl'], message: 'must be omitted when type is virtual' });
  }
  if (c.hasAds === 1 && c.adinsert === undefined) {
    check.addIssue({ code: 'custom', path: ['adinsert'], message: 'is required when hasAds is 1' });
  }
  if (c.type === 'externalHLS' && c.loopInterval !== undefined) {
    check.addIssue({ code: 'custom', path: ['loopInterval'], message: 'applies to virtual channels only' });
  }
});
export type ChannelInput = z.output<typeof channelBody>;

export const channelRead = z.object({
  guid: z.string(),
  name: z.string(),
  description: z.string(),
  active: z.number(),
  type: z.enum(CHANNEL_TYPES),
  externalUrl: z.string().optional(),
  hasAds: z.number(),
  adinsert: z.string().optional(),
  allowedForUsers: z.array(z.string()),
  allowedForRoles: z.array(z.string()),
  restrictedFor: z.array(z.string()),
  loopInterval: z.number().optional(),
  imageUrl: z.string().optional(),
  selectedMetaGroupGuid: z.string().optional(),
  meta: z.record(z.string(), z.unknown()),
  /** where a player plays the channel: the external URL, the linear HLS of a virtual channel, through SSAI with ads */
  playbackUrl: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type ChannelRead = z.output<typeof channelRead>;

/** The stored channel. */
export interface BrokerChannel {
  guid: string;
  organizationId: string;
  name: string;
  description: string;
  active: 0 | 1;
  type: ChannelType;
  externalUrl?: string;
  hasAds: 0 | 1;
  adinsert?: string;
  allowedForUsers: string[];
  allowedForRoles: string[];
  restrictedFor: string[];
  loopInterval?: number;
  imageUrl?: string;
  selectedMetaGroupGuid?: string;
  meta: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}
