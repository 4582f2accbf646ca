// Playlist text of the linear channel (pure): the multivariant playlist and one media playlist per track, from the
// timeline's window. Tags: MEDIA-SEQUENCE and DISCONTINUITY-SEQUENCE of the first segment, a DISCONTINUITY with
// MAP and PROGRAM-DATE-TIME at each item change, CUE-OUT / CUE-OUT-CONT / CUE-IN around the playlist's ad positions,
// and each break announced ahead by an EXT-X-DATERANGE (SCTE35-OUT, PLANNED-DURATION) on the segments of its lead.
// A segment's tags depend on the timeline only, never on where the window starts: a number, once listed, keeps them.
import { encodeScte35 } from '../../media/scte35-encoder.js';
import type { LinearAsset, Track } from './asset.js';
import type { LiveWindow, PlacedSegment } from './timeline.js';

export type TrackPick = (asset: LinearAsset) => Track | undefined;

export interface MasterVariant { bandwidth: number; width?: number; height?: number; codecs?: string }

export function renderMaster(variants: MasterVariant[], withAudio: boolean): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-INDEPENDENT-SEGMENTS'];
  if (withAudio) lines.push('#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="main",DEFAULT=YES,AUTOSELECT=YES,URI="audio.m3u8"');
  variants.forEach((v, j) => {
    const resolution = v.width && v.height ? `,RESOLUTION=${v.width}x${v.height}` : '';
    const codecs = v.codecs ? `,CODECS="${v.codecs}"` : '';
    lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${v.bandwidth}${resolution}${codecs}${withAudio ? ',AUDIO="aud"' : ''}`, `v${j}.m3u8`);
  });
  return `${lines.join('\n')}\n`;
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** How long before its start a break is announced (the DATERANGE on every segment starting in that lead), ms. */
export const ANNOUNCE_AHEAD_MS = 30_000;

/** One DATERANGE per break, the same text on every segment that carries it (RFC 8216 §4.3.2.7: same ID, same attributes). */
const announcements = new Map<string, string>();
function announcement(start: PlacedSegment): string {
  const piece = start.program.pieces[start.program.pieceOf[start.local]!]!;
  const key = `${start.startMs} ${piece.adMs}`;
  let line = announcements.get(key);
  if (line === undefined) {
    // The break's splice event id is its start in Unix seconds (32 bits): stable, and unique within a channel.
    const eventId = Math.floor(start.startMs / 1000) >>> 0;
    const cue = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: eventId, outOfNetwork: true, breakDuration: Math.round(piece.adMs! * 90), autoReturn: true } });
    line = `#EXT-X-DATERANGE:ID="break-${eventId}",START-DATE="${new Date(start.startMs).toISOString()}",PLANNED-DURATION=${seconds(piece.adMs!)},SCTE35-OUT=0x${Buffer.from(cue.base64, 'base64').toString('hex').toUpperCase()}`;
    if (announcements.size > 10_000) announcements.clear();
    announcements.set(key, line);
  }
  return line;
}

const isAdSegment = (s: PlacedSegment): boolean => s.program.pieces[s.program.pieceOf[s.local]!]!.adMs !== undefined;

export function renderMedia(win: LiveWindow | PlacedSegment[], pick: TrackPick, targetDuration: number, announceMs = ANNOUNCE_AHEAD_MS): string {
  const { segments: window, before, breaks } = Array.isArray(win) ? { segments: win, before: undefined, breaks: [] as PlacedSegment[] } : win;
  const first = window[0];
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', `#EXT-X-TARGETDURATION:${targetDuration}`,
    // A first segment that starts an item keeps its DISCONTINUITY (the sequence counts it): an SSAI proxy that marks ad
    // boundaries then finds the boundary already marked, whichever segment the window starts with.
    `#EXT-X-MEDIA-SEQUENCE:${first?.seq ?? 0}`, `#EXT-X-DISCONTINUITY-SEQUENCE:${first ? first.disc - (first.discontinuity ? 1 : 0) : 0}`];
  let previousAd = before !== undefined && isAdSegment(before);
  let map: string | undefined;
  let nextBreak = 0;
  window.forEach((s, i) => {
    const program = s.program;
    const piece = program.pieces[program.pieceOf[s.local]!]!;
    const index = program.segmentOf[s.local]!;
    const track = pick(piece.asset);
    const isAd = piece.adMs !== undefined;
    if (previousAd && (!isAd || s.discontinuity)) lines.push('#EXT-X-CUE-IN');
    if (s.discontinuity) lines.push('#EXT-X-DISCONTINUITY');
    if (track?.init && (i === 0 || s.discontinuity || track.init !== map)) {
      lines.push(`#EXT-X-MAP:URI="${track.init}"`);
      map = track.init;
    }
    if (i === 0 || s.discontinuity) lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(s.startMs).toISOString()}`);
    // The breaks starting within the lead of this segment (its own first segment included) are announced on it.
    while (nextBreak < breaks.length && breaks[nextBreak]!.startMs < s.startMs) nextBreak++;
    for (let b = nextBreak; b < breaks.length && breaks[b]!.startMs - announceMs <= s.startMs; b++) lines.push(announcement(breaks[b]!));
    if (isAd) {
      if (index === piece.from) lines.push(`#EXT-X-CUE-OUT:${seconds(piece.adMs!)}`);
      else {
        const startOfPiece = piece.from === 0 ? 0 : piece.asset.endsMs[piece.from - 1]!;
        const elapsed = (index === 0 ? 0 : piece.asset.endsMs[index - 1]!) - startOfPiece;
        lines.push(`#EXT-X-CUE-OUT-CONT:ElapsedTime=${seconds(elapsed)},Duration=${seconds(piece.adMs!)}`);
      }
    }
    previousAd = isAd;
    // Every track states the timeline's durations (the video's): audio cut within an AAC frame of the same points would
    // otherwise drift from video over a window, and players align renditions by these sums.
    lines.push(`#EXTINF:${(s.durationMs / 1000).toFixed(6)},`, track?.uris[index] ?? '');
  });
  return `${lines.join('\n')}\n`;
}
