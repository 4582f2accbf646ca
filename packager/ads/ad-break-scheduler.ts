// Dynamic ad breaks of a running channel (spec 4.2.11): announced at once with a future-dated EXT-X-DATERANGE carrying
// the SCTE-35 splice_insert (so the proxy can decide ads before the break), then marked on the segments with
// EXT-X-CUE-OUT:<d> at the first segment boundary at or after the break's start, EXT-X-CUE-OUT-CONT while it lasts and
// EXT-X-CUE-IN on the first segment after it. The SCTE-35 bytes come from the one codec the proxy also uses.
import { encodeScte35 } from '../../media/scte35-encoder.js';
import { TICKS_PER_SECOND } from '../../media/scte35.js';
import type { AdBreak } from '../../kernel/seams/channel-runtime.js';
import type { AnnouncedRange, CueTag } from '../hls/live-playlist.js';

interface ScheduledBreak {
  adBreak: AdBreak;
  /** the segment boundary the break starts on (epoch ms), predicted on the segment grid when scheduled */
  boundary: number;
  range: AnnouncedRange;
  base64: string;
  state: 'announced' | 'out' | 'done';
  outAt?: number;
}

// A segment whose start is this close to the predicted boundary takes the cue (encoders round segment lengths).
const TOLERANCE_MS = 250;

export class AdBreakScheduler {
  private readonly breaks: ScheduledBreak[] = [];

  constructor(private readonly segmentSeconds: number) {}

  /**
   * Schedules a break; `timelineEnd` is the end (epoch ms) of the last segment placed, from which the boundaries
   * follow every segment length. Returns the break's START-DATE.
   */
  schedule(adBreak: AdBreak, timelineEnd: number): number {
    if (this.breaks.some((b) => b.adBreak.spliceEventId === adBreak.spliceEventId)) throw new Error(`ad break ${adBreak.spliceEventId} is already scheduled`);
    const step = this.segmentSeconds * 1000;
    const firstAtOrAfter = (at: number) => (at <= timelineEnd ? timelineEnd : timelineEnd + Math.ceil((at - timelineEnd) / step) * step);
    let boundary = firstAtOrAfter(adBreak.startsAt);
    // spec 8: 15 to 20 s after the request; when the boundary after startsAt is later, an earlier one may still fit
    if (adBreak.requestedAt !== undefined && boundary > adBreak.requestedAt + 20_000) {
      boundary = Math.min(boundary, firstAtOrAfter(adBreak.requestedAt + 15_000));
    }
    const overlapping = this.breaks.find((b) => b.state !== 'done' && boundary < b.boundary + b.adBreak.duration * 1000 && b.boundary < boundary + adBreak.duration * 1000);
    if (overlapping) throw new Error(`the break overlaps ad break ${overlapping.adBreak.spliceEventId}`);
    const scte = encodeScte35({
      command: 'splice_insert',
      insert: { spliceEventId: adBreak.spliceEventId, outOfNetwork: true, breakDuration: Math.round(adBreak.duration * TICKS_PER_SECOND), autoReturn: true },
    });
    this.breaks.push({
      adBreak, boundary, base64: scte.base64, state: 'announced',
      range: { id: `splice-${adBreak.spliceEventId}`, startDate: boundary, plannedDuration: adBreak.duration, scte35Out: scte.bytes },
    });
    return boundary;
  }

  /**
   * The cue tags of the segment starting at `start` (epoch ms); called once per segment, in order. `start` comes back
   * moved onto the announced START-DATE when the cue segment began up to the tolerance before it, so the date range
   * and the CUE-OUT name the same segment.
   */
  cuesFor(start: number): { tags: CueTag[]; start: number } {
    const tags: CueTag[] = [];
    for (const b of this.breaks) {
      const d = b.adBreak.duration;
      if (b.state === 'announced' && start >= b.boundary - TOLERANCE_MS) {
        b.state = 'out';
        if (start < b.boundary) start = b.boundary;
        b.outAt = start;
        tags.push({ tagName: 'EXT-X-CUE-OUT', value: String(d) });
      } else if (b.state === 'out') {
        const elapsed = (start - b.outAt!) / 1000;
        if (elapsed >= d - TOLERANCE_MS / 1000) {
          b.state = 'done';
          tags.push({ tagName: 'EXT-X-CUE-IN' });
        } else {
          tags.push({ tagName: 'EXT-X-CUE-OUT-CONT', value: `ElapsedTime=${elapsed.toFixed(3)},Duration=${d},SCTE35=${b.base64}` });
        }
      }
    }
    return { tags, start };
  }

  /** Date ranges to write into every media playlist (the playlist drops those that ended before its window). */
  ranges(): AnnouncedRange[] {
    return this.breaks.map((b) => b.range);
  }

  /** Forgets breaks that ended long ago (beyond any window). */
  prune(before: number): void {
    for (let i = this.breaks.length - 1; i >= 0; i--) {
      const b = this.breaks[i]!;
      if (b.state === 'done' && b.boundary + b.adBreak.duration * 1000 < before) this.breaks.splice(i, 1);
    }
  }
}
