// Issue 31 item 4 through the real proxy: a viewer joining a live stream gets a pre-roll from the configuration's
// live_preroll_ad_server, never longer than live_preroll_max_seconds, asked once per session and the same on every
// reload and rendition; stitched (ads at the segment the player starts at) and guided (a CUE="PRE" interstitial).
// VOD sessions and configurations without the field are unaffected.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { checkMediaPlaylist, checkPlaylist } from '../../ssai/check/playlist-checker.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** The origin position whose window ends with segment `last`. */
const endingWith = (last: number): number => (last + 1) * SEGMENT_SECONDS;
/** A window clear of the origin's breaks at its end: the last segment is the 4th of loop `loop`, its break comes next. */
const clearOf = (loop: number): number => endingWith(loop * CLIP_SEGMENTS + BREAK_START - 1);

describe('live pre-roll', () => {
  let h: SsaiHarness;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'cue-out' } });
  }, 120_000);
  afterAll(async () => h?.close());

  /** A configuration whose breaks ask /vast3 and whose pre-roll asks /vast4 (ads a, 6 s, and b, 4 s) with its own tag. */
  async function configure(tag: string, preroll: { live_preroll_ad_server?: string; live_preroll_max_seconds?: number } | undefined, extra: Record<string, unknown> = {}): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: tag, type: 'live', ad_server: `${h.vast.url}/vast3?t=${tag}-breaks`, source_url: `${h.origin.url}/`, ...preroll, ...extra },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }
  const prerollServer = (tag: string): string => `${h.vast.url}/vast4?t=${tag}&dur=[avail.duration]&sid=[session.id]`;
  const requests = (tag: string) => h.vast.requests.filter((r) => r.query.get('t') === tag);

  async function master(guid: string, source = 'live/master.m3u8', query = ''): Promise<{ videos: string[] }> {
    const got = await h.get(`/v1/master/${guid}/${source}${query}`);
    expect(got.status, got.text).toBe(200);
    return { videos: scanMultivariantPlaylist(got.text).playlist!.variants.map((v) => v.uri) };
  }

  async function playlist(url: string) {
    const got = await h.get(url);
    expect(got.status, got.text).toBe(200);
    return { text: got.text, playlist: scanMediaPlaylist(got.text).playlist! };
  }

  const errors = (findings: Array<{ severity: string }>) => findings.filter((f) => f.severity === 'error');
  const prerollSegments = (text: string) => scanMediaPlaylist(text).playlist!.segments.filter((s) => s.uri.includes('/preroll/'));
  const seconds = (segs: Array<{ duration: number }>): number => segs.reduce((t, s) => t + s.duration, 0);

  describe('stitched', () => {
    it('gives a new live session the ads that fit the maximum where its player starts, the same on reload and on another rendition', async () => {
      const tag = 'st-max6';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag), live_preroll_max_seconds: 6 });
      h.origin.position = clearOf(40);
      const { videos } = await master(guid);
      const first = await playlist(videos[0]!);
      const ads = prerollSegments(first.text);
      // a 10 s pod (6 s + 4 s) under a 6 s maximum: the 6 s ad only
      expect(ads.length).toBeGreaterThan(0);
      expect(seconds(ads)).toBeGreaterThan(AD_SECONDS.a - 0.5);
      expect(seconds(ads)).toBeLessThanOrEqual(6.1);
      expect(first.text).toContain('X-AD-ID="ad-a"');
      expect(first.text).not.toContain('X-AD-ID="ad-b"');
      // where a player starts: the ads end the playlist, three target durations from its end
      const segs = first.playlist.segments;
      expect(segs[segs.length - 1]!.uri).toContain('/preroll/');
      expect(segs[0]!.uri).not.toContain('/preroll/');
      expect(requests(tag)).toHaveLength(1);
      expect(requests(tag)[0]!.query.get('dur')).toBe('6');
      expect(requests(tag)[0]!.query.get('sid')).toBe(videos[0]!.split('/')[4]);
      // (the break the window ends after was decided as usual: the viewer may still seek back into it)
      const breaksAsked = requests(`${tag}-breaks`).length;

      // a reload and the other rendition: the same pre-roll, no second request
      expect((await playlist(videos[0]!)).text).toBe(first.text);
      const other = await playlist(videos[1]!);
      expect(prerollSegments(other.text).map((s) => s.duration)).toEqual(ads.map((s) => s.duration));
      expect(other.playlist.mediaSequence).toBe(first.playlist.mediaSequence);

      // the window moves on: the ads keep their place and numbers, then the origin's next break is decided as usual
      h.origin.position += 2 * SEGMENT_SECONDS;
      const later = await playlist(videos[0]!);
      const sequenceOf = (p: typeof first.playlist, uri: string) => p.segments.find((s) => s.uri === uri)?.mediaSequence;
      for (const ad of ads) expect(sequenceOf(later.playlist, ad.uri)).toBe(sequenceOf(first.playlist, ad.uri));
      expect(errors(checkPlaylist(first.text))).toEqual([]);
      expect(errors(checkPlaylist(later.text, first.text))).toEqual([]);
      h.origin.position += 4 * SEGMENT_SECONDS;
      const next = await playlist(videos[0]!);
      expect(next.playlist.mediaSequence).toBeGreaterThanOrEqual(later.playlist.mediaSequence);
      expect(errors(checkPlaylist(next.text, later.text))).toEqual([]);
      expect(requests(tag)).toHaveLength(1);
      expect(requests(`${tag}-breaks`)).toHaveLength(breaksAsked + 1);

      // its beacons fire as an ad's do, through the segment redirects
      for (const ad of ads) expect((await h.get(ad.uri)).status).toBe(302);
      await h.engine.ctx.services.ssai!.beacons.idle();
      for (const event of ['impression', 'start', 'complete']) expect(h.vast.beaconCount(event, 'a'), event).toBeGreaterThanOrEqual(1);
    }, 180_000);

    it('asks once per session: two viewers get one request each', async () => {
      const tag = 'st-two';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag), live_preroll_max_seconds: 10 });
      h.origin.position = clearOf(50);
      const a = await master(guid);
      const b = await master(guid);
      const [pa, pb] = await Promise.all([playlist(a.videos[0]!), playlist(b.videos[0]!)]);
      // 10 s: both ads, the second listed as the live edge reaches its slots (the first playlist holds 6 s of them)
      for (const p of [pa, pb]) expect(seconds(prerollSegments(p.text))).toBe(6);
      h.origin.position += 2 * SEGMENT_SECONDS;
      for (const v of [a.videos[0]!, b.videos[0]!, a.videos[1]!, b.videos[1]!]) {
        const text = (await playlist(v)).text;
        expect(text).toContain('X-AD-ID="ad-a"');
        expect(text).toContain('X-AD-ID="ad-b"');
        expect(seconds(prerollSegments(text))).toBe(AD_SECONDS.a + AD_SECONDS.b);
      }
      expect(requests(tag)).toHaveLength(2);
      expect(new Set(requests(tag).map((r) => r.query.get('sid'))).size).toBe(2);
    }, 180_000);

    it('asks for 30 s when the configuration gives no maximum', async () => {
      const tag = 'st-default';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag) });
      h.origin.position = clearOf(60);
      const { videos } = await master(guid);
      await playlist(videos[0]!);
      expect(requests(tag)[0]!.query.get('dur')).toBe('30');
      h.origin.position += 2 * SEGMENT_SECONDS;
      expect(seconds(prerollSegments((await playlist(videos[0]!)).text))).toBe(AD_SECONDS.a + AD_SECONDS.b);
    }, 180_000);

    it('places the pre-roll by the video\'s window and cues when an audio playlist is asked first', async () => {
      const tag = 'st-audio';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag), live_preroll_max_seconds: 6 });
      // joined during a break the video playlists cue (the audio ones carry no cues): no pre-roll on any track
      h.origin.position = endingWith(66 * CLIP_SEGMENTS + BREAK_START + 2);
      const inBreak = await h.get(`/v1/master/${guid}/live/master.m3u8`);
      const audioOf = (text: string) => /#EXT-X-MEDIA:TYPE=AUDIO,.*URI="([^"]+)"/.exec(text)![1]!;
      expect(prerollSegments((await playlist(audioOf(inBreak.text))).text)).toEqual([]);
      expect(requests(tag)).toHaveLength(0);
      // clear of breaks: the audio's pre-roll is the video's, at the same place
      h.origin.position = clearOf(67);
      const clear = await h.get(`/v1/master/${guid}/live/master.m3u8`);
      const audio = await playlist(audioOf(clear.text));
      const video = await playlist(scanMultivariantPlaylist(clear.text).playlist!.variants[0]!.uri);
      const startOf = (p: typeof audio) => prerollSegments(p.text).length && p.playlist.segments.findIndex((x) => x.uri.includes('/preroll/'));
      expect(prerollSegments(audio.text).length).toBeGreaterThan(0);
      expect(startOf(audio)).toBe(startOf(video));
      expect(requests(tag)).toHaveLength(1);
    }, 180_000);

    it('takes the first break of a VMAP answer', async () => {
      const guid = await configure('st-vmap', { live_preroll_ad_server: `${h.vast.url}/vmap?t=st-vmap`, live_preroll_max_seconds: 6 });
      h.origin.position = clearOf(65);
      const { videos } = await master(guid);
      const text = (await playlist(videos[0]!)).text;
      expect(text).toContain('X-AD-ID="ad-a"'); // the VMAP's pre-roll break: ad a inline
      expect(seconds(prerollSegments(text))).toBe(AD_SECONDS.a);
      expect(requests('st-vmap')).toHaveLength(1);
    }, 180_000);

    it('gives none to a viewer joining during a break, nor asks for one', async () => {
      const tag = 'st-in-break';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag), live_preroll_max_seconds: 6 });
      h.origin.position = endingWith(70 * CLIP_SEGMENTS + BREAK_START + 3);
      const { videos } = await master(guid);
      const text = (await playlist(videos[0]!)).text;
      expect(prerollSegments(text)).toEqual([]);
      expect(requests(tag)).toHaveLength(0);
      // decided for good: the viewer's later playlists have none either
      h.origin.position += 4 * SEGMENT_SECONDS;
      expect(prerollSegments((await playlist(videos[0]!)).text)).toEqual([]);
      expect(requests(tag)).toHaveLength(0);
    }, 180_000);

    it('leaves a VOD session and a configuration without the field as they were', async () => {
      const tag = 'st-vod';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag), live_preroll_max_seconds: 6 });
      const vod = await master(guid, 'vod/master.m3u8');
      const vodText = (await playlist(vod.videos[0]!)).text;
      expect(vodText).toContain('#EXT-X-ENDLIST');
      expect(prerollSegments(vodText)).toEqual([]);

      const plain = await configure('st-none', undefined);
      h.origin.position = clearOf(80);
      const live = await master(plain);
      expect(prerollSegments((await playlist(live.videos[0]!)).text)).toEqual([]);
      expect(requests(tag)).toHaveLength(0);
    }, 180_000);
  });

  describe('guided', () => {
    it('lists one CUE="PRE" interstitial in the shared playlist, whose asset list gives each viewer its own pre-roll', async () => {
      const tag = 'gd-max6';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag), live_preroll_max_seconds: 6 });
      h.origin.position = clearOf(90);
      const a = await master(guid, 'live/master.m3u8', '?ads.mode=guided');
      const b = await master(guid, 'live/master.m3u8', '?ads.mode=guided');
      const pa = await playlist(a.videos[0]!);
      const pb = await playlist(b.videos[0]!);
      expect(pa.text).toBe(pb.text); // the same bytes for every viewer
      const pre = pa.text.split('\n').filter((l) => l.includes('CUE="PRE'));
      expect(pre).toHaveLength(1);
      expect(pre[0]).toContain('ID="preroll"');
      expect(pre[0]).toContain('CLASS="com.apple.hls.interstitial"');
      expect(pre[0]).toContain('X-ASSET-LIST="assets/preroll.json"');
      expect(pre[0]).toMatch(/START-DATE="[^"]+"/);
      expect(pre[0]).not.toContain('X-RESUME-OFFSET'); // players join live after it
      // (a cue break's interstitial may start before the window: a warning, not about the pre-roll)
      const findings = checkMediaPlaylist(pa.text);
      expect(errors(findings)).toEqual([]);
      expect(findings.filter((f) => f.message.includes('preroll'))).toEqual([]);
      // a reload after the window moved keeps the interstitial as it was
      h.origin.position += SEGMENT_SECONDS;
      expect((await playlist(a.videos[0]!)).text.split('\n').filter((l) => l.includes('CUE="PRE'))).toEqual(pre);
      expect(requests(tag)).toHaveLength(0); // asked when the player asks for its asset list

      for (const viewer of [a, b]) {
        const list = new URL('assets/preroll.json', `${h.engine.url}${viewer.videos[0]}`).toString();
        const got = await h.get(list);
        expect(got.status, got.text).toBe(200);
        const assets = (JSON.parse(got.text) as { ASSETS: Array<{ DURATION: number; 'X-AD-ID'?: string }> }).ASSETS;
        expect(assets.map((x) => x['X-AD-ID'])).toEqual(['ad-a']);
        expect(assets[0]!.DURATION).toBeLessThanOrEqual(6.1);
        // the same on a second asking
        expect(JSON.parse((await h.get(list)).text)).toEqual({ ASSETS: assets });
      }
      expect(requests(tag)).toHaveLength(2);
      expect(new Set(requests(tag).map((r) => r.query.get('sid'))).size).toBe(2);
    }, 180_000);

    it('lists no pre-roll in a VOD or without the field', async () => {
      const tag = 'gd-vod';
      const guid = await configure(tag, { live_preroll_ad_server: prerollServer(tag) }, { ad_server: `${h.vast.url}/empty` });
      const vod = await master(guid, 'vod/master.m3u8', '?ads.mode=guided');
      expect((await playlist(vod.videos[0]!)).text).not.toContain('CUE="PRE');
      const plain = await configure('gd-none', undefined);
      h.origin.position = clearOf(95);
      const live = await master(plain, 'live/master.m3u8', '?ads.mode=guided');
      expect((await playlist(live.videos[0]!)).text).not.toContain('preroll');
    }, 180_000);
  });
});
