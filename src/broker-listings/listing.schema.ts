// Listing (spec 2.9, 4.4) plus the extension of docs/broker.md: `playlist` or `vod` names what the listing plays.
import { z } from 'zod';
import { attachedMetaShape } from '../meta-groups/attached-meta.js';
import { httpUrl } from '../broker-channels/broker-channel.schema.js';

/** Valid Unix timestamps (spec 4.4): whole seconds between 1970 and 9999. */
export const unixSeconds = z.number({ message: 'must be a Unix timestamp in seconds' }).int('must be whole seconds').min(0).max(253_402_300_799);

export const listingBody = z.object({
  channel: z.string().min(1).max(64).optional(),
  start: unixSeconds,
  end: unixSeconds,
  title: z.string().trim().min(1, 'required').max(500),
  description: z.string().max(10_000).optional(),
  color: z.string().max(64).optional(),
  imageUrl: httpUrl().optional(),
  playlist: z.string().min(1).max(64).optional(),
  vod: z.string().min(1).max(64).optional(),
  ...attachedMetaShape,
}).superRefine((l, check) => {
  if (l.end <= l.start) check.addIssue({ code: 'custom', path: ['end'], message: 'must be after start' });
  if (l.playlist !== undefined && l.vod !== undefined) check.addIssue({ code: 'custom', path: ['vod'], message: 'a listing plays a playlist or a vod, not both' });
});
export type ListingInput = z.output<typeof listingBody>;

export const listingsBatchBody = z.object({
  channel: z.string().min(1).max(64),
  start: unixSeconds,
  end: unixSeconds,
  listings: z.array(listingBody).min(1).max(10_000),
}).superRefine((b, check) => {
  if (b.end <= b.start) check.addIssue({ code: 'custom', path: ['end'], message: 'must be after start' });
});
export type ListingsBatch = z.output<typeof listingsBatchBody>;

/** The answer of GET /broker/listings, items of Listing (documented only, as every response schema). */
export const listingList = z.object({
  status: z.literal(true),
  data: z.array(z.object({
    guid: z.string(), channel: z.string(), start: z.number(), end: z.number(), title: z.string(), description: z.string().optional(),
    color: z.string().optional(), imageUrl: z.string().optional(), playlist: z.string().optional(), vod: z.string().optional(),
    selectedMetaGroupGuid: z.string().optional(), meta: z.record(z.string(), z.unknown()),
  })),
});

export interface Listing {
  guid: string;
  channel: string;
  start: number;
  end: number;
  title: string;
  description?: string;
  color?: string;
  imageUrl?: string;
  playlist?: string;
  vod?: string;
  selectedMetaGroupGuid?: string;
  meta: Record<string, unknown>;
}
