// One rendition's live media playlist, written by the engine (not ffmpeg) so it can carry cues: a sliding window with
// monotonic EXT-X-MEDIA-SEQUENCE and EXT-X-DISCONTINUITY-SEQUENCE, EXT-X-PROGRAM-DATE-TIME on every segment, and the
// date ranges of scheduled ad breaks (RFC 8216 4.4.3.2, 4.4.4.5, 4.4.5.1). Rendered with hls-parser.
import HLS from 'hls-parser';

const { MediaPlaylist, Segment, SpliceInfo, DateRange, MediaInitializationSection } = HLS.types;

/** A cue tag written before a segment, verbatim (`EXT-X-CUE-OUT:30`, `EXT-X-CUE-OUT-CONT:…`, `EXT-X-CUE-IN`). */
export interface CueTag {
  tagName: string;
  value?: string;
}

export interface WindowSegment {
  uri: string;
  duration: number;
  programDateTime: number;
  discontinuity: boolean;
  cues: CueTag[];
  /** fMP4 initialization section */
  map?: string;
}

/** A date range to announce (an ad break, RFC 8216 4.4.5.1), with SCTE35-OUT bytes. */
export interface AnnouncedRange {
  id: string;
  startDate: number;
  plannedDuration: number;
  scte35Out: Uint8Array;
}

export interface PlaylistCounters {
  mediaSequence: number;
  discontinuitySequence: number;
}

/** What a restarted engine needs to continue a playlist: its counters and the segments in its window. */
export interface PlaylistSnapshot {
  counters: PlaylistCounters;
  segments: WindowSegment[];
}

export class LiveMediaPlaylist {
  private readonly window: WindowSegment[] = [];
  private counters: PlaylistCounters;
  private targetDuration: number;
  private ended = false;

  constructor(private readonly windowSize: number, nominalSegmentSeconds: number, start?: PlaylistSnapshot) {
    this.counters = { ...(start?.counters ?? { mediaSequence: 0, discontinuitySequence: 0 }) };
    this.targetDuration = Math.max(1, Math.ceil(nominalSegmentSeconds));
    for (const segment of start?.segments ?? []) {
      this.window.push(segment);
      this.targetDuration = Math.max(this.targetDuration, Math.round(segment.duration));
    }
  }

  snapshot(): PlaylistSnapshot {
    return { counters: { ...this.counters }, segments: this.window.map((s) => ({ ...s })) };
  }

  /** Adds a finished segment; returns the URIs that left the window (the caller deletes them after a grace period). */
  append(segment: WindowSegment): string[] {
    // The first segment of a (resumed) playlist needs no discontinuity tag: nothing precedes it in the window.
    this.window.push({ ...segment, discontinuity: segment.discontinuity && this.window.length > 0 });
    this.targetDuration = Math.max(this.targetDuration, Math.round(segment.duration));
    const removed: string[] = [];
    while (this.window.length > this.windowSize) {
      const gone = this.window.shift()!;
      this.counters.mediaSequence += 1;
      // RFC 8216 6.2.1: the discontinuity sequence counts the discontinuity tags that slid out.
      if (gone.discontinuity) this.counters.discontinuitySequence += 1;
      removed.push(gone.uri);
    }
    return removed;
  }

  /** Ends the playlist (the channel stopped): players play out the window and stop. */
  end(): void {
    this.ended = true;
  }

  get segments(): readonly WindowSegment[] {
    return this.window;
  }

  get mediaSequence(): number {
    return this.counters.mediaSequence;
  }

  get discontinuitySequence(): number {
    return this.counters.discontinuitySequence;
  }

  render(ranges: readonly AnnouncedRange[] = []): string {
    const firstPdt = this.window[0]?.programDateTime ?? Number.POSITIVE_INFINITY;
    const playlist = new MediaPlaylist({
      version: this.window.some((s) => s.map) ? 7 : 6,
      targetDuration: this.targetDuration,
      mediaSequenceBase: this.counters.mediaSequence,
      discontinuitySequenceBase: this.counters.discontinuitySequence,
      independentSegments: true,
      endlist: this.ended,
      // a range that ended before the window began is of no use to a player any more
      dateRanges: ranges.filter((r) => r.startDate + r.plannedDuration * 1000 >= firstPdt).map((r) => new DateRange({
        id: r.id, start: new Date(r.startDate), plannedDuration: r.plannedDuration, attributes: { 'SCTE35-OUT': r.scte35Out },
      } as ConstructorParameters<typeof DateRange>[0])),
      segments: this.window.map((s, i) => new Segment({
        uri: s.uri,
        duration: s.duration,
        discontinuity: s.discontinuity,
        mediaSequenceNumber: this.counters.mediaSequence + i,
        programDateTime: new Date(s.programDateTime),
        markers: s.cues.map((c) => new SpliceInfo({ type: 'RAW', tagName: c.tagName, ...(c.value !== undefined ? { value: c.value } : {}) })),
        ...(s.map ? { map: new MediaInitializationSection({ uri: s.map }) } : {}),
      })),
    });
    return HLS.stringify(playlist);
  }
}
