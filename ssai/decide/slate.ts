// Slate for the part of an avail the ads leave (issue 5 "Ad decisions": "fill the rest with slate"): the configuration's
// slate_ad image turned into video matching the content ladder by the encoder's prepareSlate, cached on disk by image,
// length and ladder. The planner takes any PrepareSlateFn: a queue-backed one (a worker job, like creatives) when the
// engine wires it, or this in-process one, which runs the same prepareSlate (a still image is a short ffmpeg run) and
// shares its disk cache and in-flight de-duplication.
import type { Logger } from 'pino';
import { prepareSlate } from '../../vod-encoder/prepare-creative.js';
import type { AdinsertConfig } from '../../kernel/seams/adinserts.js';
import type { PrepareSlateFn } from './slate-fill.js';

export interface LocalSlateOptions {
  /** the creative cache directory inside the served media store (creative URLs must resolve there) */
  cacheDir: string;
  logger?: Logger;
  preset?: string;
  fetchTimeoutMs?: number;
}

/** prepareSlate run in this process, with prepareSlate's own disk cache. */
export function localSlatePreparer(opts: LocalSlateOptions): PrepareSlateFn {
  return (imageUrl, ladder, durationSec) => prepareSlate(imageUrl, ladder, durationSec, {
    cacheDir: opts.cacheDir, ...(opts.logger ? { logger: opts.logger } : {}), ...(opts.preset ? { preset: opts.preset } : {}),
    ...(opts.fetchTimeoutMs ? { fetchTimeoutMs: opts.fetchTimeoutMs } : {}),
  });
}

/** The planner's slateImage dependency over the configuration lookup (already an LRU invalidated on update). */
export function slateImageFrom(lookup: { get(guid: string): Promise<AdinsertConfig | undefined> }): (guid: string) => Promise<string | undefined> {
  return async (guid) => (await lookup.get(guid))?.slateAd;
}
