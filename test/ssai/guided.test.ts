// Issue 30 points 1–4 through the real proxy: guided sessions get the origin's content with an HLS Interstitial per
// break, the same bytes for every viewer; the asset list holds the viewer's own ads (one decision across reloads),
// each ad an HLS stream whose segments fire the viewer's beacons through /v1/segment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_SECONDS, BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import { INTERSTITIAL_CLASS } from '../../ssai/stitch/interstitials.js';
import { checkMediaPlaylist } from '../../ssai/check/playlist-checker.js';
import { segmentUris, startSsai, variantUrls, type SsaiHarness } from './setup.js';

type Assets = { ASSETS: Array<{ URI: string; DURATION: number }> };

/** The attributes of the interstitial date ranges of a playlist, by ID. */
function interstitials(text: string): Map<string, Record<string, string>> {
  const pl = scanMediaPlaylist(text).playlist!;
  const out = new Map<string, Record<string, string>>();
  for (const tag of [...pl.header, ...pl.segments.flatMap((s) => s.tags)]) {
    if (tag.name !== 'EXT-X-DATERANGE') continue;
    const attrs: Record<string, string> = {};
    for (const m of tag.value.matchAll(/([A-Z0-9-]+)=("[^"]*"|[^,]*)/g)) attrs[m[1]!] = m[2]!.replace(/^"|"$/g, '');
    if (attrs.CLASS === INTERSTITIAL_CLASS) out.set(attrs.ID!, attrs);
  }
  return out;
}

describe('server-guided ad insertion (HLS Interstitials)', () => {
  let h: SsaiHarness;
  let guid: string;

  beforeAll(async () => {
    h = await startSsai();
    guid = await h.configure('/vast4?sid=[session.id]');
  }, 120_000);
  afterAll(async () => h?.close());

  /** A new guided session's video and audio playlist URLs. */
  async function guidedSession(source: string, query = 'ads.mode=guided'): Promise<{ video: string[]; audio: string[] }> {
    const master = await h.get(`/v1/master/${guid}/${source}?${query}`);
    expect(master.status, master.text).toBe(200);
    const pl = scanMultivariantPlaylist(master.text).playlist!;
    return { video: pl.variants.map((v) => v.uri), audio: pl.renditions.filter((r) => r.uri).map((r) => r.uri!) };
  }

  it('lists the origin content with an interstitial per break, the same bytes for every viewer', async () => {
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 3) * SEGMENT_SECONDS;
    const a = await guidedSession('live/master.m3u8');
    const b = await guidedSession('live/master.m3u8');
    expect(a.video[0]).not.toBe(b.video[0]);
    const [ra, rb] = [await h.get(a.video[0]!), await h.get(b.video[0]!)];
    expect(ra.status).toBe(200);
    expect(ra.text).toBe(rb.text);
    const sid = a.video[0]!.split('/')[4]!;
    expect(ra.text).not.toContain(sid);
    // a CDN may hold it for half a target duration
    expect(ra.headers.get('cache-control')).toBe('public, max-age=1');
    // the content segments are the origin's own, none replaced
    const uris = segmentUris(ra.text);
    expect(uris.length).toBeGreaterThan(0);
    expect(uris.every((u) => u.startsWith(h.origin.url))).toBe(true);
    expect(checkMediaPlaylist(ra.text).filter((f) => f.severity === 'error')).toEqual([]);
    const found = interstitials(ra.text);
    expect(found.size).toBe(1);
    const [id, attrs] = [...found][0]!;
    expect(Number(attrs.DURATION ?? attrs['PLANNED-DURATION'])).toBeCloseTo(BREAK_SECONDS, 3);
    expect(Number(attrs['X-RESUME-OFFSET'])).toBeCloseTo(BREAK_SECONDS, 3); // live: the break's content is skipped
    expect(attrs['X-ASSET-LIST']).toBe(`assets/${encodeURIComponent(id)}.json`);
    // the START-DATE is the program date-time of the break's first segment
    const pl = scanMediaPlaylist(ra.text).playlist!;
    const breakStart = pl.segments.find((s) => s.pdtMs === Date.parse(attrs['START-DATE']!));
    expect(breakStart, 'START-DATE falls on a segment of the window').toBeDefined();
    // the audio playlist is the origin's as it is
    const audio = await h.get(a.audio[0]!);
    expect(segmentUris(audio.text).every((u) => u.startsWith(h.origin.url))).toBe(true);
  });

  it('answers each viewer its own ads in the asset list, the same on every request, and fires beacons once from the asset segments', async () => {
    h.origin.position = (2 * CLIP_SEGMENTS + BREAK_START + 3) * SEGMENT_SECONDS;
    const s = await guidedSession('live/master.m3u8');
    const text = (await h.get(s.video[0]!)).text;
    const [id, attrs] = [...interstitials(text)][0]!;
    const assetListUrl = new URL(attrs['X-ASSET-LIST']!, `${h.engine.url}${s.video[0]}`).href;
    // hls.js adds its own id (_HLS_primary_id): it changes nothing
    const first = await h.get(`${assetListUrl}?_HLS_primary_id=abc`);
    expect(first.status, first.text).toBe(200);
    const assets = JSON.parse(first.text) as Assets;
    expect(assets.ASSETS.map((x) => x.DURATION).reduce((t, d) => t + d, 0)).toBeCloseTo(BREAK_SECONDS, 0);
    expect((await h.get(assetListUrl)).text).toBe(first.text);
    // another viewer's list is its own
    const other = await guidedSession('live/master.m3u8');
    const otherList = JSON.parse((await h.get(new URL(attrs['X-ASSET-LIST']!, `${h.engine.url}${other.video[0]}`).href)).text) as Assets;
    expect(otherList.ASSETS[0]!.URI).not.toBe(assets.ASSETS[0]!.URI);
    h.vast.beaconFailures = 0;
    const before = h.vast.beaconCount('impression', 'a');
    for (const asset of assets.ASSETS) {
      const master = await h.get(asset.URI);
      expect(master.status, master.text).toBe(200);
      const variants = variantUrls(master.text);
      expect(variants.length).toBeGreaterThan(0);
      for (const v of variants) {
        const media = await h.get(new URL(v, asset.URI).href);
        expect(media.status, media.text).toBe(200);
        const pl = scanMediaPlaylist(media.text).playlist!;
        expect(pl.endList).toBe(true);
        expect(pl.segments.reduce((t, x) => t + x.duration, 0)).toBeCloseTo(asset.DURATION, 0);
        for (const seg of pl.segments) expect((await h.get(seg.uri)).status).toBe(302);
      }
    }
    await h.engine.ctx.services.ssai!.beacons.idle();
    expect(h.vast.beaconCount('impression', 'a') - before).toBe(1);
    // the tracking JSON lists the guided break with its ads, for client-side reporting
    const sid = s.video[0]!.split('/')[4]!;
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${sid}`)).text) as { avails: Array<{ availId: string; ads: Array<{ duration: number; trackingEvents: unknown[] }> }> };
    const listed = tracking.avails.find((a) => a.availId === id);
    expect(listed?.ads.map((a) => a.duration)).toEqual(assets.ASSETS.map((a) => a.DURATION));
    expect(listed?.ads[0]?.trackingEvents).toHaveLength(6);
  });

  it('inserts VOD breaks without replacing content, dated from a fixed base where the origin has no dates', async () => {
    h.origin.programDateTime = false;
    try {
      const s = await guidedSession('vod/master.m3u8');
      const r = await h.get(s.video[0]!);
      const pl = scanMediaPlaylist(r.text).playlist!;
      expect(pl.endList).toBe(true);
      expect(checkMediaPlaylist(r.text)).toEqual([]);
      expect(pl.segments.length).toBe(CLIP_SEGMENTS);
      expect(pl.segments[0]!.pdtMs).toBe(Date.UTC(2000, 0, 1));
      const found = [...interstitials(r.text).values()];
      expect(found.length).toBe(1);
      expect(found[0]!['X-RESUME-OFFSET']).toBe('0');
      expect(Date.parse(found[0]!['START-DATE']!)).toBe(Date.UTC(2000, 0, 1) + BREAK_START * SEGMENT_SECONDS * 1000);
    } finally {
      h.origin.programDateTime = true;
    }
  });

  it('announces the VMAP pre-roll of a VOD, mid-rolls and post-roll (CUE="PRE", "POST") where the origin has no cues', async () => {
    const vmapGuid = await h.configure('/vmap', { type: 'broker' });
    h.origin.cueForm = 'none';
    try {
      const master = await h.get(`/v1/master/${vmapGuid}/vod/master.m3u8?ads.mode=guided`);
      const video = scanMultivariantPlaylist(master.text).playlist!.variants[0]!.uri;
      const r = await h.get(video);
      expect(checkMediaPlaylist(r.text).filter((f) => f.severity === 'error')).toEqual([]);
      expect(segmentUris(r.text).every((u) => u.startsWith(h.origin.url))).toBe(true);
      const found = [...interstitials(r.text).values()];
      expect(found.map((a) => a.CUE ?? '')).toEqual(['PRE', '', '', 'POST']);
      expect(found.every((a) => a['X-RESUME-OFFSET'] === '0')).toBe(true);
      const pre = JSON.parse((await h.get(new URL(found[0]!['X-ASSET-LIST']!, `${h.engine.url}${video}`).href)).text) as Assets;
      expect(pre.ASSETS.map((x) => x.DURATION)).toEqual([6]); // the pre-roll's inline VAST: ad a
      // the session's playlist is the same on a reload (its VMAP is asked once)
      expect((await h.get(video)).text).toBe(r.text);
    } finally {
      h.origin.cueForm = 'cue-out';
    }
  });

  it('takes the mode from the configuration, lets a session choose unless the configuration forbids it, and names a bad mode', async () => {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth,
      body: { name: 'guided only', type: 'live', ad_server: `${h.vast.url}/vast4`, source_url: `${h.origin.url}/`, insertion_mode: 'guided', insertion_mode_override: false },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const only = created.body.guid as string;
    const read = await h.engine.api('GET', `/broker/adinserts/${only}`, { headers: h.auth });
    expect(read.body.data).toMatchObject({ insertionMode: 'guided', insertionModeOverride: false });
    const master = await h.get(`/v1/master/${only}/live/master.m3u8`);
    const media = await h.get(variantUrls(master.text)[0]!);
    expect(interstitials(media.text).size + segmentUris(media.text).length).toBeGreaterThan(0);
    expect(segmentUris(media.text).some((u) => u.startsWith('/v1/segment/'))).toBe(false);
    const refused = await h.get(`/v1/master/${only}/live/master.m3u8?ads.mode=stitched`);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).code).toBe('INSERTION_MODE_FORBIDDEN');
    const bad = await h.get(`/v1/master/${guid}/live/master.m3u8?ads.mode=sideways`);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).code).toBe('BAD_INSERTION_MODE');
    const badConfig = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth, body: { name: 'x', type: 'live', ad_server: `${h.vast.url}/vast4`, source_url: `${h.origin.url}/`, insertion_mode: 'sideways' },
    });
    expect(badConfig.status).toBe(400);
    expect(JSON.stringify(badConfig.body)).toContain('insertion_mode');
    // the session body chooses too
    const posted = await h.get(`/v1/session/${guid}/live/master.m3u8`, { method: 'POST', body: JSON.stringify({ insertionMode: 'guided' }), headers: { 'content-type': 'application/json' } });
    expect(posted.status).toBe(200);
    const guidedMaster = await h.get(JSON.parse(posted.text).manifestUrl as string);
    const guidedMedia = await h.get(variantUrls(guidedMaster.text)[0]!);
    expect(segmentUris(guidedMedia.text).every((u) => u.startsWith(h.origin.url))).toBe(true);
  });

  it('decides a break announced ahead before the player asks for its asset list, once', async () => {
    h.origin.cueForm = 'daterange-ahead';
    try {
      // the window ends two segments before the fourth loop's break, which is announced four segments ahead
      h.origin.position = (3 * CLIP_SEGMENTS + BREAK_START - 2) * SEGMENT_SECONDS;
      const s = await guidedSession('live/master.m3u8');
      const sid = s.video[0]!.split('/')[4]!;
      const text = (await h.get(s.video[0]!)).text;
      const [, attrs] = [...interstitials(text)][0]!;
      const pl = scanMediaPlaylist(text).playlist!;
      const last = pl.segments[pl.segments.length - 1]!;
      expect(Date.parse(attrs['START-DATE']!)).toBeGreaterThanOrEqual(last.pdtMs! + last.duration * 1000);
      const asked = () => h.vast.requests.filter((r) => r.query.get('sid') === sid).length;
      // decided in the background within the lead (a few seconds here): waited for as an event, not a time budget
      for (let i = 0; i < 300 && asked() === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(asked(), 'the ad server was asked before the asset list was').toBe(1);
      const list = JSON.parse((await h.get(new URL(attrs['X-ASSET-LIST']!, `${h.engine.url}${s.video[0]}`).href)).text) as Assets;
      expect(list.ASSETS.length).toBe(2);
      expect(asked()).toBe(1);
    } finally {
      h.origin.cueForm = 'cue-out';
    }
  });

  it('answers 404 BREAK_NOT_FOUND for an asset list of a break the stream does not list', async () => {
    const s = await guidedSession('live/master.m3u8');
    const r = await h.get(s.video[0]!.replace(/\/\d+\.m3u8$/, '/assets/nope.json'));
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text).code).toBe('BREAK_NOT_FOUND');
  });
});
