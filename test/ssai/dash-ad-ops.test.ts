// Issue 33 item 3 with issue 31's ad-operations fields on a DASH VOD session, through the real proxy: the origin's
// SCTE-35 EventStreams kept or left out (ad_marker_passthrough), the CDN prefixes on the content's BaseURL and the ad
// Representations' templates, the personalization threshold and the bumpers (docs/ssai-dash.md, "Ad-operations fields").
// The origin: the engine's 16 s CMAF encode with one 10 s SCTE-35 break at 4 s, its cue-in at 14 s, a chapter start
// (an SCTE-35 cue that is no break) at 15 s and an EventStream of another scheme at 1 s.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashOrigin } from '../../fixtures/dash-origin.js';
import { DASH_LIVE_MPD_PATH, DashLiveOrigin, type DashLiveBreaks } from '../../fixtures/dash-live-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { encodeScte35 } from '../../media/scte35-encoder.js';
import { readTestMpd } from '../helpers/dash-mpd.js';
import { startSsai, type SsaiHarness } from './setup.js';
import { untilAViewerHasAds } from './dash-setup.js';

const MPD = 'vod/cmaf/ops.mpd';

async function originMpd(dir: string): Promise<string> {
  const mpd = await readFile(path.join(dir, 'vod/cmaf/manifest.mpd'), 'utf8');
  const out = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 7, outOfNetwork: true, breakDuration: 10 * 90_000, autoReturn: true, availNum: 1, availsExpected: 1 } }).base64;
  const back = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 7, outOfNetwork: false, autoReturn: false, availNum: 1, availsExpected: 1 } }).base64;
  const bin = (at: number, id: string, b64: string): string => `<Event presentationTime="${at}" id="${id}"><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>${b64}</Binary></Signal></Event>`;
  return mpd.replace(/(<Period[^>]*>)/, `$1
<EventStream schemeIdUri="urn:example:chapters" timescale="1"><Event presentationTime="1" id="c1">chapter one</Event></EventStream>
<EventStream schemeIdUri="urn:scte:scte35:2014:xml+bin" timescale="1000">${bin(4000, '1', out)}${bin(14000, '2', back)}</EventStream>
<EventStream schemeIdUri="urn:scte:scte35:2013:xml" timescale="90000"><Event presentationTime="1350000" id="3"><scte35:SpliceInfoSection xmlns:scte35="http://www.scte.org/schemas/35/2016">
<scte35:TimeSignal><scte35:SpliceTime ptsTime="1350000"/></scte35:TimeSignal>
<scte35:SegmentationDescriptor segmentationEventId="30" segmentationTypeId="32" segmentNum="1" segmentsExpected="1"/>
</scte35:SpliceInfoSection></Event></EventStream>`);
}

/** The EventStreams of each Period of an MPD text: scheme, presentationTimeOffset and the Events' presentationTimes. */
function streamsByPeriod(text: string): Record<string, Array<{ scheme: string; pto: number; at: number[] }>> {
  const out: Record<string, Array<{ scheme: string; pto: number; at: number[] }>> = {};
  for (const period of text.split('<Period ').slice(1)) {
    const id = /^[^>]*\bid="([^"]+)"/.exec(period)![1]!;
    out[id] = [...period.matchAll(/<EventStream ([^>]*)>([\s\S]*?)<\/EventStream>/g)].map((m) => ({
      scheme: /schemeIdUri="([^"]+)"/.exec(m[1]!)![1]!,
      pto: Number(/presentationTimeOffset="(\d+)"/.exec(m[1]!)?.[1] ?? 0),
      at: [...m[2]!.matchAll(/<Event [^>]*presentationTime="(\d+)"/g)].map((e) => Number(e[1])),
    }));
  }
  return out;
}

/** Waits until a viewer of the break gets its ads (untilAViewerHasAds), under a configuration of its own. */
async function adsReady(h: SsaiHarness, origin: DashOrigin, mpdPath = MPD): Promise<void> {
  const created = await h.engine.api('POST', '/broker/adinserts', { headers: h.auth, body: { name: 'warm', type: 'broker', ad_server: `${h.vast.url}/vast4`, source_url: `${origin.url}/` } });
  await untilAViewerHasAds(async () => (await h.get(`/v1/dash/${created.body.guid as string}/${mpdPath}`)).text);
}

describe('ad-operations fields on a DASH session', () => {
  let h: SsaiHarness;
  let origin: DashOrigin;

  beforeAll(async () => {
    origin = await DashOrigin.start();
    origin.overrides.set(`/${MPD}`, await originMpd(origin.dir));
    h = await startSsai();
    await adsReady(h, origin);
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
  });

  async function configure(adServerPath: string, fields: Record<string, unknown> = {}): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth, body: { name: 'dash-ops', type: 'broker', ad_server: `${h.vast.url}${adServerPath}`, source_url: `${origin.url}/`, ...fields },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }
  const viewerMpd = async (guid: string): Promise<{ text: string; url: string }> => {
    const url = `${h.engine.url}/v1/dash/${guid}/${MPD}`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    return { text: res.text, url };
  };

  it('keeps the origin\'s EventStreams in the content Periods by default, each Event where it plays, the break\'s own cues gone with its content', async () => {
    const { text } = await viewerMpd(await configure('/vast4'));
    const streams = streamsByPeriod(text);
    expect(Object.keys(streams)).toEqual(['content-0', 'scte-7-0', 'scte-7-1', 'content-1']);
    // content-0 [0, 4): the chapter at 1 s; the break's cue-out at 4 s is the ads' now
    expect(streams['content-0']).toEqual([{ scheme: 'urn:example:chapters', pto: 0, at: [1] }]);
    expect(streams['scte-7-0']).toEqual([]);
    // content-1 [14, 16): the chapter start at 15 s kept, its stream's offset moved to the Period's start (14 s at
    // 90 kHz) so its time in the Period is 1 s; the cue-in at 14 s left out (the ads ended the break)
    expect(streams['content-1']).toEqual([{ scheme: 'urn:scte:scte35:2013:xml', pto: 14 * 90_000, at: [1_350_000] }]);
    expect(text).toContain('segmentationTypeId="32"');
  });

  it('leaves the SCTE-35 EventStreams out with ad_marker_passthrough false, and keeps the others', async () => {
    const { text } = await viewerMpd(await configure('/vast4', { ad_marker_passthrough: false }));
    const streams = streamsByPeriod(text);
    expect(Object.keys(streams)).toEqual(['content-0', 'scte-7-0', 'scte-7-1', 'content-1']);
    expect(streams['content-0']).toEqual([{ scheme: 'urn:example:chapters', pto: 0, at: [1] }]);
    expect(streams['content-1']).toEqual([]);
    expect(text).not.toContain('scte35');
  });

  it('addresses the content through content_segment_prefix and the ads through ad_segment_prefix, each mapping to what the engine serves', async () => {
    const guid = await configure('/vast4', { content_segment_prefix: 'https://content-cdn.test/c', ad_segment_prefix: 'https://ad-cdn.test/a/' });
    const { text, url } = await viewerMpd(guid);
    const mpd = readTestMpd(text, url);
    expect(mpd.periods.map((p) => p.id)).toEqual(['content-0', 'scte-7-0', 'scte-7-1', 'content-1']);
    for (const p of mpd.periods.filter((x) => x.id.startsWith('content-'))) {
      expect(p.baseUrl).toBe('https://content-cdn.test/c/vod/cmaf/');
      // the CDN forwards <prefix>/<path> to <source_url>/<path>: every content segment is the origin's file
      for (const rep of p.sets.flatMap((s) => s.representations).filter((r) => r.segments.length)) {
        for (const u of [rep.init!, rep.segments[0]!.url]) {
          expect(u.startsWith('https://content-cdn.test/c/')).toBe(true);
          expect((await fetch(`${origin.url}/${u.slice('https://content-cdn.test/c/'.length)}`)).status, u).toBe(200);
        }
      }
    }
    const ad = mpd.periods[1]!;
    const reps = ad.sets.flatMap((s) => s.representations);
    expect(reps.length).toBeGreaterThan(0);
    for (const rep of reps) {
      // <prefix>/<path> forwards to <public URL>/<path>: the init segment is the media store's, a media segment the
      // beacon-firing redirect of this viewer's session
      const urls = rep.init ? [rep.init, rep.segments[0]!.url] : [rep.segments[0]?.url ?? ''];
      for (const u of urls.filter(Boolean)) {
        expect(u.startsWith('https://ad-cdn.test/a/'), u).toBe(true);
        const got = await h.get(`/${u.slice('https://ad-cdn.test/a/'.length)}`);
        expect([200, 302], u).toContain(got.status);
      }
    }
    // the sidecar text's stand-in during the ads too
    expect(text).toContain('<BaseURL>https://ad-cdn.test/a/v1/static/empty.vtt</BaseURL>');
  });

  it('plays the break\'s content when the ads leave more of it than the personalization threshold, and the ads when not', async () => {
    const count = async (): Promise<number> => Number(/ssai_breaks_unpersonalised_total\{reason="threshold"\} (\d+)/.exec((await h.get('/metrics')).text)?.[1] ?? 0);
    const before = await count();
    // /vast3: ad a (6 s) alone in the 10 s break, 4 s unfilled
    const strict = await viewerMpd(await configure('/vast3', { personalization_threshold_seconds: 3 }));
    const whole = readTestMpd(strict.text, strict.url);
    expect(whole.periods.map((p) => [p.id, p.start, p.duration])).toEqual([['content-0', 0, 16]]);
    expect(await count()).toBe(before + 1);
    const lenient = await viewerMpd(await configure('/vast3', { personalization_threshold_seconds: 5 }));
    expect(readTestMpd(lenient.text, lenient.url).periods.map((p) => [p.id, p.duration])).toEqual([['content-0', 4], ['scte-7-0', AD_SECONDS.a], ['content-1', 2]]);
  });

  it('plays the start bumper as a Period of its own before the ads, inside the break, without beacons', async () => {
    // a 4 s start bumper (the fixture's b.mp4) and ad a (6 s): the 10 s break filled
    const guid = await configure('/vast-viewer?sid=[session.id]', { bumper_start_url: `${h.vast.url}/media/b.mp4` });
    const { text, url } = await viewerMpd(guid);
    const mpd = readTestMpd(text, url);
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([['content-0', 0, 4], ['scte-7-0', 4, AD_SECONDS.b], ['scte-7-1', 8, AD_SECONDS.a], ['content-1', 14, 2]]);
    const firstVideo = (id: string): string => mpd.periods.find((p) => p.id === id)!.sets.find((s) => s.contentType === 'video')!.representations[0]!.segments[0]!.url;
    const bumper = await h.get(firstVideo('scte-7-0'));
    expect(bumper.status).toBe(302);
    expect(bumper.headers.get('location')).toMatch(/\/bumper-start-[^/]+\//);
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(text)![1]!;
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${sid}`)).text) as { avails: Array<{ ads: Array<{ adId: string; bumper?: string; trackingEvents: unknown[] }> }> };
    expect(tracking.avails[0]!.ads.map((a) => [a.adId, a.bumper ?? null, a.trackingEvents.length > 0])).toEqual([['bumper-start', 'start', false], [`ad-a-${sid}`, null, true]]);
    // the ad's first video segment fires its impression; the bumper's fired nothing
    const fired = (): number[] => ['a', 'b'].flatMap((ad) => ['impression', 'start'].map((e) => h.vast.beaconCount(e, `${ad}-${sid}`)));
    expect(fired()).toEqual([0, 0, 0, 0]);
    expect((await h.get(firstVideo('scte-7-1'))).status).toBe(302);
    // (beacons are sent aside the redirect: waited for, not assumed)
    await expect.poll(() => h.vast.beaconCount('impression', `a-${sid}`), { timeout: 10_000 }).toBe(1);
    expect(fired()).toEqual([1, 1, 0, 0]);
  });
});

/** One 10 s break at 10 s of the live origin's Period, its cue in the MPD 6 s ahead (the viewer's edge then ~4–6 s). */
const LIVE_BREAK: DashLiveBreaks = { firstAtSec: 10, everySec: 10_000, durationSec: 10, announceSec: 6, scheme: 'bin' };

const SUPPRESSIONS: Record<string, Record<string, string>> = {
  'after-full': { mode: 'AFTER_LIVE_EDGE', value: '00:00:30', fill_policy: 'FULL_AVAIL_ONLY' },
  behind: { mode: 'BEHIND_LIVE_EDGE', value: '00:00:00', fill_policy: 'FULL_AVAIL_ONLY' },
  'after-partial': { mode: 'AFTER_LIVE_EDGE', value: '00:00:08', fill_policy: 'PARTIAL_AVAIL' },
};

describe('avail suppression on a live DASH session', () => {
  let h: SsaiHarness;
  let live: DashLiveOrigin;

  const viewers = new Map<string, { asked: number; tracking: Tracking }>();

  beforeAll(async () => {
    [live, h] = await Promise.all([DashLiveOrigin.start({ windowSegments: 8, breaks: LIVE_BREAK }), startSsai()]);
    const guids = await Promise.all(Object.entries(SUPPRESSIONS).map(async ([tag, suppression]) => [tag, await configure(tag, suppression)] as const));
    // the viewers arrive together as soon as the cue is in the origin's MPD, before the break (their edge ~4–6 s)
    await live.waitFor((m) => m.includes('<Event '), 60_000);
    const seen = await Promise.all(guids.map(async ([tag, guid]) => [tag, await viewer(tag, guid)] as const));
    for (const [tag, v] of seen) viewers.set(tag, v);
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await live?.close();
  });

  type Tracking = { avails: Array<{ availId: string; duration: number; timelineOffsetSeconds?: number; ads: unknown[] }> };
  async function configure(tag: string, suppression: Record<string, string>): Promise<string> {
    const created = await h.engine.api('POST', '/broker/adinserts', {
      headers: h.auth, body: { name: tag, type: 'live', ad_server: `${h.vast.url}/vast4?t=${tag}`, source_url: `${live.url}/`, avail_suppression: suppression },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.guid as string;
  }
  /** A viewer of a configuration with its own tag (its ad server requests counted) and its tracking after its first MPD. */
  async function viewer(tag: string, guid: string): Promise<{ asked: number; tracking: Tracking }> {
    const res = await h.get(`/v1/dash/${guid}/${DASH_LIVE_MPD_PATH}`);
    expect(res.status, res.text).toBe(200);
    const sid = new URLSearchParams(/<Location>[^<?]*\?([^<]+)<\/Location>/.exec(res.text)![1]!.replace(/&amp;/g, '&')).get('sessionId')!;
    const tracking = JSON.parse((await h.get(`/v1/tracking/${guid}/${sid}`)).text) as Tracking;
    return { asked: h.vast.requests.filter((r) => r.query.get('t') === tag).length, tracking };
  }
  const suppressedCount = async (): Promise<number> => Number(/ssai_breaks_unpersonalised_total\{reason="suppression"\} (\d+)/.exec((await h.get('/metrics')).text)?.[1] ?? 0);

  it('leaves a break that starts within AFTER_LIVE_EDGE\'s value to its content, without asking the ad server', async () => {
    const { asked, tracking } = viewers.get('after-full')!;
    expect(asked).toBe(0);
    expect(tracking.avails.map((a) => [a.availId, a.ads.length])).toEqual([['scte-1000', 0]]);
    // (the one suppressed break of this engine)
    expect(await suppressedCount()).toBe(1);
  });

  it('fills the break ahead of the viewer\'s live edge under BEHIND_LIVE_EDGE', () => {
    const { asked, tracking } = viewers.get('behind')!;
    expect(asked).toBe(1);
    expect(tracking.avails.map((a) => [a.availId, a.timelineOffsetSeconds, a.duration, a.ads.length])).toEqual([['scte-1000', 10, 10, 2]]);
  });

  it('fills the rest of a break running at AFTER_LIVE_EDGE\'s moment under PARTIAL_AVAIL, from that moment', () => {
    // the edge at ~4–6 s: the break (10–20 s) may be filled from edge + 8 s, 12–14 s
    const { asked, tracking } = viewers.get('after-partial')!;
    expect(asked).toBe(1);
    const [rest] = tracking.avails;
    expect(rest!.availId).toBe('scte-1000');
    expect(rest!.timelineOffsetSeconds).toBeGreaterThan(10);
    expect(rest!.timelineOffsetSeconds).toBeLessThanOrEqual(18);
    expect(rest!.timelineOffsetSeconds! + rest!.duration).toBeCloseTo(20, 3);
  });
});
