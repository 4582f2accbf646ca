// Playlist text of the linear channel (pure): the multivariant playlist and one media playlist per track, from the
// timeline's window. Tags: MEDIA-SEQUENCE and DISCONTINUITY-SEQUENCE of the first segment, a DISCONTINUITY with
// MAP and PROGRAM-DATE-TIME at each item change, CUE-OUT / CUE-OUT-CONT / CUE-IN around the playlist's ad positions.
import type { LinearAsset, Track } from './asset.js';
import type { PlacedSegment } from './timeline.js';

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

export function renderMedia(window: PlacedSegment[], pick: TrackPick, targetDuration: number): string {
  const first = window[0];
  const lines = ['#EXTM3U', '#EXT-X-VERSION:7', `#EXT-X-TARGETDURATION:${targetDuration}`,
    // A first segment that starts an item keeps its DISCONTINUITY (the sequence counts it): an SSAI proxy that marks ad
    // boundaries then finds the boundary already marked, whichever segment the window starts with.
    `#EXT-X-MEDIA-SEQUENCE:${first?.seq ?? 0}`, `#EXT-X-DISCONTINUITY-SEQUENCE:${first ? first.disc - (first.discontinuity ? 1 : 0) : 0}`];
  let previousAd = false;
  let map: string | undefined;
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
