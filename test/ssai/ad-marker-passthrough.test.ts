// Issue 31 item 5 through the real proxy: ad_marker_passthrough true (the default) keeps the origin's cue tags in the
// playlists it serves, false removes every cue form the cue finder reads and nothing else: the playlist is the same
// line for line but for the cue lines (so its numbers and dates are too), checker-clean, in both insertion modes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS, type CueForm } from '../../fixtures/origin-server.js';
import { checkMediaPlaylist } from '../../ssai/check/playlist-checker.js';
import { INTERSTITIAL_CLASS } from '../../ssai/stitch/interstitials.js';
import { scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** A cue line as the origin fixtures write them, told apart here without the proxy's own predicate. */
function isCueLine(line: string): boolean {
  if (/^#EXT-X-DATERANGE:/.test(line)) return /[:,]SCTE35-(OUT|IN|CMD)=/.test(line);
  return /^#(EXT-X-CUE-OUT|EXT-X-CUE-OUT-CONT|EXT-X-CUE-IN|EXT-OATCLS-SCTE35|EXT-X-SPLICEPOINT-SCTE35|EXT-X-SCTE35)(:|$)/.test(line);
}
const cueLines = (text: string): string[] => text.split('\n').filter(isCueLine);
const withoutCues = (text: string): string => text.split('\n').filter((l) => !isCueLine(l)).join('\n');
const errors = (text: string) => checkMediaPlaylist(text).filter((f) => f.severity === 'error');

const LIVE_FORMS: CueForm[] = ['cue-out', 'cue-out-cont-slash', 'daterange', 'daterange-ahead', 'oatcls', 'splicepoint', 'scte35'];

describe('ad-marker passthrough', () => {
  let h: SsaiHarness;
  /** configurations by ad server and passthrough: keep (left out: the default), keepTrue (true), drop (false) */
  const guids: Record<string, string> = {};

  async function configure(adServer: string, passthrough: boolean | undefined): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: 'passthrough', type: 'live', ad_server: `${h.vast.url}${adServer}`, source_url: `${h.origin.url}/`,
        ...(passthrough !== undefined ? { ad_marker_passthrough: passthrough } : {}) },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }

  /** The video playlist of a new session (guid and session id replaced by G and S, so two configurations compare). */
  async function video(guid: string, path: string, mode: 'stitched' | 'guided'): Promise<string> {
    const master = await h.get(`/v1/master/${guid}/${path}?ads.mode=${mode}`);
    expect(master.status, master.text).toBe(200);
    const uri = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
    const sid = uri.split('/')[4]!;
    const media = await h.get(uri);
    expect(media.status, media.text).toBe(200);
    return media.text.replaceAll(guid, 'G').replaceAll(sid, 'S');
  }

  beforeAll(async () => {
    // no playlist ends before a break still being decided: the sessions compared list the same segments
    h = await startSsai({ cutBeforeUndecidedBreaks: false });
    // ten segments in the window: a whole loop of the clip, with its break, its cue-in and the announcements ahead
    h.origin.windowSegments = CLIP_SEGMENTS;
    for (const [name, adServer] of [['empty', '/empty'], ['ads', '/vast3']] as const) {
      guids[`${name}-keep`] = await configure(adServer, undefined);
      guids[`${name}-drop`] = await configure(adServer, false);
    }
    guids['empty-keepTrue'] = await configure('/empty', true);
  }, 120_000);
  afterAll(async () => h?.close());

  let loop = 1;
  /** A new loop of the clip in the window for each case: every session decides a break of its own. */
  const nextLoop = (): void => { loop++; h.origin.position = (loop + 1) * CLIP_SEGMENTS * SEGMENT_SECONDS; };

  it.each(LIVE_FORMS)('stitched, unfilled break: keeps the %s cue tags by default and removes exactly them when false', async (form) => {
    h.origin.cueForm = form;
    nextLoop();
    const keep = await video(guids['empty-keep']!, 'live/master.m3u8', 'stitched');
    const keepTrue = await video(guids['empty-keepTrue']!, 'live/master.m3u8', 'stitched');
    const drop = await video(guids['empty-drop']!, 'live/master.m3u8', 'stitched');
    // true is the default: the origin's cue tags pass through as the origin wrote them
    expect(keepTrue).toBe(keep);
    expect(cueLines(keep).length).toBeGreaterThanOrEqual(form === 'daterange-ahead' ? 4 : 2);
    const origin = h.origin.mediaPlaylist('v0', false);
    expect(cueLines(keep)).toEqual(cueLines(origin));
    expect(cueLines(drop)).toEqual([]);
    expect(drop).toBe(withoutCues(keep));
    expect(errors(drop)).toEqual([]);
    expect(errors(keep)).toEqual([]);
  });

  it.each(LIVE_FORMS)('stitched, filled break at a %s cue: the same playlist but for the cue lines, the engine\'s ad DATERANGEs kept', async (form) => {
    h.origin.cueForm = form;
    nextLoop();
    const keep = await video(guids['ads-keep']!, 'live/master.m3u8', 'stitched');
    const drop = await video(guids['ads-drop']!, 'live/master.m3u8', 'stitched');
    expect(drop).toContain('/v1/segment/G/S/');
    expect(drop).toContain('CLASS="com.engine.ad"');
    expect(cueLines(drop)).toEqual([]);
    expect(drop).toBe(withoutCues(keep));
    expect(errors(drop)).toEqual([]);
    // the date range forms are carried past the ads when kept
    if (form.startsWith('daterange')) expect(cueLines(keep).length).toBeGreaterThan(0);
  });

  it('stitched VOD with an insertion point (EXT-X-CUE-OUT:0): removed, the ads inserted all the same', async () => {
    h.origin.cueForm = 'cue-out-zero';
    const keep = await video(guids['ads-keep']!, 'vod/master.m3u8', 'stitched');
    const drop = await video(guids['ads-drop']!, 'vod/master.m3u8', 'stitched');
    expect(cueLines(keep)).toEqual([]); // stitched at the insertion point: the cue is the break's, as before
    expect(drop).toBe(keep);
    expect(drop).toContain('/v1/segment/G/S/');
    const unfilledKeep = await video(guids['empty-keep']!, 'vod/master.m3u8', 'stitched');
    const unfilledDrop = await video(guids['empty-drop']!, 'vod/master.m3u8', 'stitched');
    expect(cueLines(unfilledKeep)).toEqual(['#EXT-X-CUE-OUT:0']);
    expect(unfilledDrop).toBe(withoutCues(unfilledKeep));
    expect(errors(unfilledDrop)).toEqual([]);
  });

  it.each(LIVE_FORMS)('guided: the shared playlist keeps the %s cue tags by default, drops them when false, the interstitial stays', async (form) => {
    h.origin.cueForm = form;
    nextLoop();
    // side by side: one origin fetch may serve both configurations, each gets its own text
    const [keep, drop] = await Promise.all([video(guids['ads-keep']!, 'live/master.m3u8', 'guided'), video(guids['ads-drop']!, 'live/master.m3u8', 'guided')]);
    expect(cueLines(keep)).toEqual(cueLines(h.origin.mediaPlaylist('v0', false)));
    expect(cueLines(keep).length).toBeGreaterThan(0);
    expect(cueLines(drop)).toEqual([]);
    expect(drop).toContain(`CLASS="${INTERSTITIAL_CLASS}"`);
    expect(drop).toBe(withoutCues(keep));
    expect(errors(drop)).toEqual([]);
  });
});
