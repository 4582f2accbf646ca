// The renditions of one session number their discontinuities alike (stop 53): hls.js holds an alternate audio
// rendition until the video playlist reaches the audio's last discontinuity, and aligns the two by discontinuity, so
// audio numbered one apart from video never starts. A break absorbs the origin's discontinuities inside it (an item
// change during the ads); each track learns which from its own window, so a track first loaded once such a
// discontinuity had slid out of the window (a player switching its audio language, or one whose audio playlist came a
// segment after its video) counted it where its sibling did not. The origin here carries such a discontinuity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist, type MediaPlaylist } from '../../media/playlist-scanner.js';
import { checkPlaylist } from '../../ssai/check/playlist-checker.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** the loop segment that starts a new item inside every break (the origin's discontinuity the break absorbs) */
const ITEM_CHANGE = BREAK_START + 2;

/**
 * The fixture's media playlists with a discontinuity on every ITEM_CHANGE segment, their DISCONTINUITY-SEQUENCE
 * counting those before the window as a packager would.
 */
function withItemChanges(pathname: string, body: string): string {
  if (pathname.endsWith('/master.m3u8')) return body;
  const first = Number(/^#EXT-X-MEDIA-SEQUENCE:(\d+)$/m.exec(body)![1]);
  const before = Math.floor((first + CLIP_SEGMENTS - 1 - ITEM_CHANGE) / CLIP_SEGMENTS); // k < first with k % CLIP_SEGMENTS == ITEM_CHANGE
  const segment = `seg_${String(ITEM_CHANGE).padStart(3, '0')}.`;
  return body
    .replace(/^#EXT-X-DISCONTINUITY-SEQUENCE:(\d+)$/m, (_, n: string) => `#EXT-X-DISCONTINUITY-SEQUENCE:${Number(n) + before}`)
    .replace(new RegExp(`^(#EXTINF:[^\\n]*\\n[^\\n]*${segment})`, 'gm'), '#EXT-X-DISCONTINUITY\n$1');
}

/** The discontinuity sequence of each content segment (not an ad), by its date. */
const contentCcByDate = (pl: MediaPlaylist): Map<number, number> =>
  new Map(pl.segments.filter((s) => !s.uri.includes('/v1/segment/') && s.pdtMs !== undefined).map((s) => [s.pdtMs!, s.discontinuitySequence]));

describe('the discontinuity numbering of a session\'s renditions', () => {
  let h: SsaiHarness;
  beforeAll(async () => {
    // every playlist waits for its break's decision: the windows compared are the origin's, whole
    h = await startSsai({ cutBeforeUndecidedBreaks: false, origin: { cueForm: 'daterange' } });
    h.origin.rewrite = withItemChanges;
  }, 120_000);
  afterAll(async () => h?.close());

  it('is the same for an audio playlist first loaded after the discontinuity its break absorbed slid out of the window', async () => {
    const guid = await h.configure('/vast4?sid=[session.id]');
    const breakStart = CLIP_SEGMENTS + BREAK_START;
    // The window (6 segments) ends with the second loop's break, whole, its item change inside it.
    h.origin.position = (breakStart + 5) * SEGMENT_SECONDS;
    const master = (await h.get(`/v1/master/${guid}/live/master.m3u8`)).text;
    const pl = scanMultivariantPlaylist(master).playlist!;
    const video = pl.variants[0]!.uri;
    const audio = pl.renditions.find((r) => r.type === 'AUDIO')!.uri!;
    const first = await h.get(video);
    expect(first.text).toContain('/v1/segment/');
    // Two segments on, the item change has slid out of the window, the break's end still in it: the video reloads,
    // and the audio is loaded for the first time.
    h.origin.position = (breakStart + 5 + 4) * SEGMENT_SECONDS;
    const videoNow = scanMediaPlaylist((await h.get(video)).text).playlist!;
    const audioText = (await h.get(audio)).text;
    const audioNow = scanMediaPlaylist(audioText).playlist!;
    expect(videoNow.segments[0]!.mediaSequence).toBeGreaterThan(breakStart + ITEM_CHANGE - BREAK_START);
    expect(audioText).toContain('/v1/segment/');
    expect(checkPlaylist(audioText).filter((f) => f.severity === 'error')).toEqual([]);
    // Ads are cut per track (an audio ad has its own segments), so the tracks are compared where they must agree: the
    // content segments, by date, and the discontinuity the playlist ends in (hls.js's endCC).
    const videoCc = contentCcByDate(videoNow);
    const audioCc = contentCcByDate(audioNow);
    const differ = [...audioCc].filter(([at, cc]) => videoCc.has(at) && videoCc.get(at) !== cc)
      .map(([at, cc]) => `${new Date(at).toISOString()}: video ${videoCc.get(at)}, audio ${cc}`);
    expect([...audioCc.keys()].filter((at) => videoCc.has(at)).length).toBeGreaterThanOrEqual(3);
    expect(differ).toEqual([]);
    expect(audioNow.segments.at(-1)!.discontinuitySequence).toBe(videoNow.segments.at(-1)!.discontinuitySequence);
    // A segment on, the audio's reload numbers from what it took into its own marks (it reads its siblings' no more).
    h.origin.position += SEGMENT_SECONDS;
    const videoLater = scanMediaPlaylist((await h.get(video)).text).playlist!;
    const audioLater = scanMediaPlaylist((await h.get(audio)).text).playlist!;
    const videoLaterCc = contentCcByDate(videoLater);
    expect([...contentCcByDate(audioLater)].filter(([at, cc]) => videoLaterCc.has(at) && videoLaterCc.get(at) !== cc)).toEqual([]);
    expect(audioLater.segments.at(-1)!.discontinuitySequence).toBe(videoLater.segments.at(-1)!.discontinuitySequence);
    // and renames nothing it listed: a content segment keeps its discontinuity number from one audio reload to the next
    const audioLaterCc = contentCcByDate(audioLater);
    expect([...audioCc].filter(([at, cc]) => audioLaterCc.has(at) && audioLaterCc.get(at) !== cc)).toEqual([]);
  }, 240_000);
});
