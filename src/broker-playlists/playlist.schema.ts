// Playlist (spec 2.10, 4.5): sources are VODs; `ads` mark ad positions inside a source (offset `start` in seconds).
import { z } from 'zod';
import { attachedMetaShape } from '../meta-groups/attached-meta.js';
import { binary, httpUrl } from '../broker-channels/broker-channel.schema.js';

/** A source is a VOD source (spec 2.12 calls its type `source`; `vod` is accepted as the same). */
export const SOURCE_TYPES = ['source', 'vod'] as const;

export const adPosition = z.object({
  /** seconds from the start of the source */
  start: z.number().int('whole seconds').min(0),
  /** the VOD played at this position (the ad server's ads replace it when the channel has ads) */
  guid: z.string().min(1).max(64),
  /** 1: the ad replaces as much of the source; 0: the source pauses for the ad */
  substitute: binary.default(0),
});
export type AdPosition = z.output<typeof adPosition>;

export const playlistSource = z.object({
  guid: z.string().min(1).max(64),
  type: z.enum(SOURCE_TYPES, { message: 'source (a VOD source)' }),
  substitute: z.number().int().optional(),
  ads: z.array(adPosition).max(100).optional(),
});
export type PlaylistSourceInput = z.output<typeof playlistSource>;

export const playlistBody = z.object({
  name: z.string().trim().min(1, 'required').max(200),
  title: z.string().max(1024).optional(),
  description: z.string().max(10_000).optional(),
  color: z.string().max(64).optional(),
  imageUrl: httpUrl().optional(),
  sources: z.array(playlistSource).min(1, 'a playlist plays at least one source').max(1000),
  ...attachedMetaShape,
});
export type PlaylistInput = z.output<typeof playlistBody>;

export interface Playlist {
  guid: string;
  organizationId: string;
  name: string;
  title?: string;
  description?: string;
  color?: string;
  imageUrl?: string;
  sources: PlaylistSourceInput[];
  selectedMetaGroupGuid?: string;
  meta: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** Seconds rounded to the millisecond. */
export const seconds = (value: number): number => Math.round(value * 1000) / 1000;
