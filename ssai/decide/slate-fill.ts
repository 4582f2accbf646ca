// Slate fill (issue 19 point 4): the part of a break the ads leave, or all of it when the decision failed or missed its
// deadline, plays the configuration's slate image when the slate is prepared in time; otherwise the content resumes.
import { creativeKey, type PreparedCreative, type TargetLadder } from '../../vod-encoder/prepare-creative.js';
import type { VodResult } from '../../vod-encoder/errors.js';
import type { AvailRecord, SessionRecord } from './avail-record.js';
import type { ContentShape } from '../stitch/content-shape.js';
import { ladderOf, type CreativeCache } from './creative-cache.js';
import type { CreativePlan } from '../stitch/creative-plan.js';
import type { Avail } from '../parse/cue-finder.js';
import type { SsaiMetrics } from '../metrics.js';
import { VMAP_AVAIL_PREFIX } from './vmap-avails.js';
import { isPreroll } from './live-preroll.js';

/** The encoder's prepareSlate: a still image held for `durationSec` with silence, as renditions of the ladder. */
export type PrepareSlateFn = (imageUrl: string, ladder: TargetLadder, durationSec: number) => Promise<VodResult<PreparedCreative>>;

/** The ad id and creative id a slate filler is recorded under (tracking JSON, segment routes). */
export const SLATE_AD_ID = 'slate';

export interface SlateFillDeps {
  metrics: SsaiMetrics;
  /** how long a playlist request waits for a creative being prepared before skipping it this time */
  creativeWaitMs: number;
  /** the configuration's slate_ad image for a configuration guid; absent or undefined: no slate (content resumes) */
  slateImage?: (guid: string) => Promise<string | undefined>;
  /** the encoder's prepareSlate (queue or local, see ssai/slate.ts); absent when none is reachable */
  prepareSlate?: () => PrepareSlateFn | undefined;
}

export class SlateFill {
  constructor(private readonly deps: SlateFillDeps, private readonly creatives: CreativeCache) {}

  /**
   * Fills the part of the avail the ads leave (all of it when the decision failed) with the configuration's slate,
   * when the break's length is known and the slate is prepared in time; otherwise the break ends when the ads end
   * and the content resumes at the next slot (today's behaviour). Sets the record's endSegmentIndex either way.
   */
  async fillWithSlate(session: SessionRecord, record: AvailRecord, avail: Avail, targetDuration: number, adSeconds: number, shape?: ContentShape, waitMs = this.deps.creativeWaitMs): Promise<void> {
    if (record.insert) { record.endSegmentIndex = record.startSegmentIndex; return; } // nothing replaced: nothing to fill
    const slot = record.slotDuration;
    let total = adSeconds;
    // Only a break of known length is filled: an open break without a planned duration may end at any time.
    const gap = Math.round((record.duration - adSeconds) * 1000) / 1000;
    // (A VMAP avail's duration is only the room up to the next break: no slate either; nor after a live pre-roll,
    // which returns to the content when its ads end.)
    const known = !avail.id.startsWith(VMAP_AVAIL_PREFIX) && !isPreroll(avail.id) && (avail.durationFromCue || !avail.open);
    if (known && gap >= Math.min(1, slot / 2)) {
      const got = await this.slate(session, targetDuration, gap, shape, waitMs);
      if (typeof got === 'string') {
        if (got !== 'no slate') record.skipped.push({ adId: SLATE_AD_ID, reason: got });
      } else {
        record.ads.push({ adId: SLATE_AD_ID, creativeId: SLATE_AD_ID, duration: got.duration, creativeKey: got.key, slate: true });
        total += got.duration;
      }
    }
    record.endSegmentIndex = avail.startSegmentIndex + Math.ceil(total / slot - 1e-3);
    if (avail.endSegmentIndex !== undefined) record.endSegmentIndex = Math.min(record.endSegmentIndex, avail.endSegmentIndex);
    if (record.endSegmentIndex <= record.startSegmentIndex) record.ads = [];
  }

  /** The configuration's slate for `seconds`, or why there is none this time ('no slate' when none is configured). */
  private async slate(session: SessionRecord, targetDuration: number, seconds: number, shape: ContentShape | undefined, waitMs: number): Promise<CreativePlan | string> {
    const image = await this.deps.slateImage?.(session.guid).catch(() => undefined);
    if (!image) return 'no slate';
    const ladder = ladderOf(session.rungs, targetDuration, shape);
    // Whole milliseconds: one prepared slate per gap length (prepareSlate caches by length, image and ladder).
    const durationSec = Math.round(seconds * 1000) / 1000;
    const key = creativeKey(`slate-${durationSec}`, image, ladder);
    const got = await this.creatives.prepared(key, () => {
      const prepare = this.deps.prepareSlate?.();
      return prepare && (() => prepare(image, ladder, durationSec));
    }, waitMs);
    if (typeof got === 'string') this.deps.metrics.creativesSkipped.inc({ reason: `slate ${got.split(':')[0] ?? got}` });
    return typeof got === 'string' ? `slate ${got}` : got;
  }
}
