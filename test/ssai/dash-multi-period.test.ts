// Issue 33: a multi-Period VOD origin through the proxy. The engine's own encode served as two Periods (0–8 s and
// 8–16 s, each with its own BaseURL, presentationTimeOffset and startNumber; the second without the small video rung):
// VMAP breaks at the Periods' start, at their boundary, inside the second and after it, and an SCTE-35 cue whose break
// spans the boundary. The viewer's MPD has the Periods expected, check-playlist finds no error in it, ffmpeg decodes
// the ad Periods.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DOMParser, XMLSerializer, type Element } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPlaylistUrl } from '../../ssai/check/check-url.js';
import { childrenNamed } from '../../ssai/parse/mpd-reader.js';
import { DashOrigin } from '../../fixtures/dash-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { encodeScte35 } from '../../media/scte35-encoder.js';
import { readTestMpd, undecodedPeriods, type TestPeriod } from '../helpers/dash-mpd.js';
import { startSsai, type SsaiHarness } from './setup.js';

/** Video 15,360 ticks a second (2 s segments), audio 48 kHz: the encode's segments that start at 8 s. */
const SPLIT = { video: 8 * 15_360, audio: 384_000, number: 5 };

/** The encode's MPD as two Periods, each listing its own segments under `<BaseURL>cmaf/</BaseURL>`. */
async function twoPeriods(dir: string, cues: Array<string | undefined> = []): Promise<string> {
  const doc = new DOMParser().parseFromString(await readFile(path.join(dir, 'vod/cmaf/manifest.mpd'), 'utf8'), 'text/xml');
  const mpd = doc.documentElement!;
  const first = childrenNamed(mpd, 'Period')[0]!;
  const second = first.cloneNode(true) as Element;
  mpd.appendChild(second);
  const el = (name: string): Element => doc.createElementNS(mpd.namespaceURI, name);
  for (const [k, p] of [first, second].entries()) {
    p.setAttribute('id', `part-${k + 1}`);
    p.setAttribute('start', k ? 'PT8S' : 'PT0S');
    const base = el('BaseURL');
    base.appendChild(doc.createTextNode('cmaf/'));
    p.insertBefore(base, p.firstChild);
    for (const set of childrenNamed(p, 'AdaptationSet')) for (const rep of childrenNamed(set, 'Representation')) {
      // the second Period without the 256x144 rung: its ads mirror a track set of their own
      if (k && rep.getAttribute('id') === '1') { set.removeChild(rep); continue; }
      const tpl = childrenNamed(rep, 'SegmentTemplate')[0];
      if (!tpl) continue;
      const timeline = childrenNamed(tpl, 'SegmentTimeline')[0]!;
      while (timeline.firstChild) timeline.removeChild(timeline.firstChild);
      const audio = set.getAttribute('contentType') === 'audio';
      const s = (t: number | undefined, d: number, r: number): void => {
        const x = el('S');
        if (t !== undefined) x.setAttribute('t', String(t));
        x.setAttribute('d', String(d));
        if (r) x.setAttribute('r', String(r));
        timeline.appendChild(x);
      };
      if (!k) {
        if (audio) { s(0, 95_232, 0); s(undefined, 96_256, 2); } else s(0, 30_720, 3);
        continue;
      }
      tpl.setAttribute('presentationTimeOffset', String(audio ? SPLIT.audio : SPLIT.video));
      tpl.setAttribute('startNumber', String(SPLIT.number));
      if (audio) { s(SPLIT.audio, 96_256, 2); s(undefined, 95_232, 0); } else s(SPLIT.video, 30_720, 3);
    }
  }
  [first, second].forEach((p, k) => {
    const cue = cues[k];
    if (cue) p.insertBefore(new DOMParser().parseFromString(cue, 'text/xml').documentElement!, childrenNamed(p, 'AdaptationSet')[0]!);
  });
  return new XMLSerializer().serializeToString(doc);
}

const isAd = (p: TestPeriod): boolean => !p.id.startsWith('content-');

describe('DASH VOD of several Periods through the proxy', () => {
  let h: SsaiHarness;
  let origin: DashOrigin;

  beforeAll(async () => {
    origin = await DashOrigin.start();
    origin.overrides.set('/vod/two-periods.mpd', await twoPeriods(origin.dir));
    // a splice_insert for 4 s at 6 s of the first Period (its break 2 s into the second), one at 4 s of the second (12 s)
    const cue = (id: number, atMs: number): string => {
      const insert = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: id, outOfNetwork: true, breakDuration: 4 * 90_000, autoReturn: true, availNum: 1, availsExpected: 1 } }).base64;
      return `<EventStream xmlns="urn:mpeg:dash:schema:mpd:2011" schemeIdUri="urn:scte:scte35:2014:xml+bin" timescale="1000">
<Event presentationTime="${atMs}" duration="4000" id="1"><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>${insert}</Binary></Signal></Event></EventStream>`;
    };
    origin.overrides.set('/vod/two-periods-cue.mpd', await twoPeriods(origin.dir, [cue(301, 6000), cue(302, 4000)]));
    h = await startSsai();
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
  });

  it('places VMAP breaks across the Periods, each ad Period mirroring the Period it interrupts, and check-playlist finds no error', async () => {
    // the fixture's VMAP: pre-roll (a), mid-roll at 8 s, the Periods' boundary (a), at 75 % = 12 s (a, b), post-roll (b)
    const guid = await h.configure('/vmap', { type: 'broker', source: `${origin.url}/` });
    const url = `${h.engine.url}/v1/dash/${guid}/vod/two-periods.mpd`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    const mpd = readTestMpd(res.text, url);
    const { a, b } = AD_SECONDS;
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([
      ['vmap-preroll-0', 0, a], ['content-0', a, 8], ['vmap-midroll-1-0', a + 8, a], ['content-1', 2 * a + 8, 4],
      ['vmap-midroll-2-0', 2 * a + 12, a], ['vmap-midroll-2-1', 3 * a + 12, b], ['content-2', 3 * a + b + 12, 4], ['vmap-postroll-0', 3 * a + b + 16, b],
    ]);
    // the content Periods keep each origin Period's media time and numbers, under its BaseURL
    const video = (id: string) => mpd.periods.find((p) => p.id === id)!.sets.find((s) => s.contentType === 'video')!;
    expect(mpd.periods.filter((p) => !isAd(p)).map((p) => p.baseUrl)).toEqual(Array(3).fill(`${origin.url}/vod/cmaf/`));
    for (const [id, at, rungs] of [['content-0', 0, 2], ['content-1', 8, 1], ['content-2', 12, 1]] as const) {
      const set = video(id);
      expect(set.representations.length, id).toBe(rungs);
      const rep = set.representations[0]!;
      expect(rep.presentationTimeOffset / rep.timescale, id).toBe(at);
      expect(rep.segments[0]!.url, id).toBe(`${origin.url}/vod/cmaf/chunk_0_${String(at / 2 + 1).padStart(5, '0')}.m4s`);
    }
    // the pre-roll mirrors the first Period (two rungs), the breaks from 8 s on the second (one)
    expect(mpd.periods.filter(isAd).map((p) => [p.id, p.sets.find((s) => s.contentType === 'video')!.representations.length]))
      .toEqual([['vmap-preroll-0', 2], ['vmap-midroll-1-0', 1], ['vmap-midroll-2-0', 1], ['vmap-midroll-2-1', 1], ['vmap-postroll-0', 1]]);
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(res.text)![1]!;
    const findings = await checkPlaylistUrl(`${url}?sessionId=${sid}`, 0);
    expect(findings, res.text).toEqual([]);
    expect(await undecodedPeriods(mpd.periods.filter((p) => p.id === 'vmap-preroll-0' || p.id === 'vmap-midroll-1-0'), 30)).toEqual([]);
  }, 180_000);

  it('replaces the content under each Period\'s cues, a break across the Periods\' boundary resuming the second at its end', async () => {
    // vast4: ads a (6 s) and b (4 s); the 4 s break takes b
    const guid = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    const url = `${h.engine.url}/v1/dash/${guid}/vod/two-periods-cue.mpd`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    const mpd = readTestMpd(res.text, url);
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([['content-0', 0, 6], ['scte-301-0', 6, 4], ['content-1', 10, 2], ['scte-302-0', 12, 4]]);
    // the first break's ads mirror the first Period (it starts there), the second's the second; the second Period
    // resumes at 10 s, 2 s into it
    expect(mpd.periods.filter(isAd).map((p) => p.sets.find((s) => s.contentType === 'video')!.representations.length)).toEqual([2, 1]);
    const resumed = mpd.periods[2]!.sets.find((s) => s.contentType === 'video')!.representations[0]!;
    expect([resumed.presentationTimeOffset / resumed.timescale, resumed.startNumber]).toEqual([10, 6]);
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(res.text)![1]!;
    expect(await checkPlaylistUrl(`${url}?sessionId=${sid}`, 0), res.text).toEqual([]);
    expect(await undecodedPeriods(mpd.periods.filter(isAd), 30)).toEqual([]);
  }, 180_000);
});
