// Bumpers (issue 31 item 3): the configuration's short clips played at the start and at the end of every filled
// break, prepared to the content's shape like an ad's media file. They are no ads: no VAST, no tracking, no beacons.
// The planning rules are pure (bumperRoom, bracketed); Bumpers gets the prepared clips through the creative cache.
import type { Logger } from 'pino';
import type { PlannedAdRecord } from './avail-record.js';
import type { BreakPolicies } from './break-policy.js';
import type { CreativeCache } from './creative-cache.js';
import type { CreativePlan } from '../stitch/creative-plan.js';
import type { TargetLadder } from '../../vod-encoder/prepare-creative.js';
import type { SsaiMetrics } from '../metrics.js';

export type BumperPlace = 'start' | 'end';

/** The longest clip played as a bumper (a longer one is prepared but never played). */
export const MAX_BUMPER_SECONDS = 10;
/** Slack for the prepared length of a 10 s clip (frame and AAC framing round it up a little). */
const LENGTH_SLACK_S = 0.1;

/** The ids a bumper is recorded under (the tracking JSON, the debug log, the skipped list). */
export const BUMPER_ID: Readonly<Record<BumperPlace, string>> = { start: 'bumper-start', end: 'bumper-end' };

/** A break's bumpers as prepared clips: each one absent when not configured or not playable this time. */
export type BreakBumpers = { start?: CreativePlan; end?: CreativePlan };

/** The bumpers' seconds. */
export function bumperSeconds(b: BreakBumpers): number {
  return (b.start?.duration ?? 0) + (b.end?.duration ?? 0);
}

/**
 * The seconds of a break the ads are chosen to fit: the break less its bumpers (they play inside it), or the whole
 * length of a VOD insertion (it grows by its bumpers instead).
 */
export function bumperRoom(breakSeconds: number, insert: boolean, b: BreakBumpers): number {
  return insert ? breakSeconds : Math.max(0, breakSeconds - bumperSeconds(b));
}

/** A bumper as a planned item of a break's record: its creative, no ad id, no tracking. */
export function bumperItem(place: BumperPlace, plan: CreativePlan): PlannedAdRecord {
  return { adId: BUMPER_ID[place], creativeId: '', duration: plan.duration, creativeKey: plan.key, bumper: place };
}

/** The break's items: the start bumper, the ads, the end bumper. Without ads the break is not filled: no bumpers. */
export function bracketed(ads: PlannedAdRecord[], b: BreakBumpers): PlannedAdRecord[] {
  if (!ads.length) return ads;
  return [...(b.start ? [bumperItem('start', b.start)] : []), ...ads, ...(b.end ? [bumperItem('end', b.end)] : [])];
}

/** Why a prepared clip is not played as a bumper, or undefined when it is. */
export function unplayableBumper(plan: CreativePlan): string | undefined {
  return plan.duration > MAX_BUMPER_SECONDS + LENGTH_SLACK_S ? `longer than ${MAX_BUMPER_SECONDS} s (${plan.duration} s): not played` : undefined;
}

export type BumpersDeps = { metrics: SsaiMetrics; logger: Logger };

/** Bumper URLs logged as too long (once per URL per process; bounded). */
const loggedLong = new Set<string>();

export class Bumpers {
  constructor(private readonly deps: BumpersDeps, private readonly creatives: Pick<CreativeCache, 'creative'>) {}

  /**
   * The configuration's bumpers prepared for `ladder`, each as the creative cache has it now: one not prepared yet is
   * left out of this break (its preparation goes on for the next ones), one longer than 10 s is never played. Each
   * left out is added to `skipped`.
   */
  async prepared(policies: BreakPolicies | undefined, ladder: TargetLadder, skipped: Array<{ adId: string; reason: string }>): Promise<BreakBumpers> {
    const out: BreakBumpers = {};
    const one = async (place: BumperPlace, url: string | undefined): Promise<void> => {
      if (!url) return;
      const got = await this.creatives.creative(url, ladder, BUMPER_ID[place]);
      const why = typeof got === 'string' ? got : unplayableBumper(got);
      if (why === undefined && typeof got !== 'string') { out[place] = got; return; }
      skipped.push({ adId: BUMPER_ID[place], reason: why ?? 'unknown' });
      this.deps.metrics.creativesSkipped.inc({ reason: typeof got === 'string' ? `bumper ${got.split(':')[0] ?? got}` : 'bumper too long' });
      if (typeof got !== 'string' && !loggedLong.has(url) && loggedLong.size < 1000) {
        loggedLong.add(url);
        this.deps.logger.warn({ url, seconds: got.duration }, `a ${place} bumper longer than ${MAX_BUMPER_SECONDS} s is not played`);
      }
    };
    await Promise.all([one('start', policies?.bumperStartUrl), one('end', policies?.bumperEndUrl)]);
    return out;
  }
}
