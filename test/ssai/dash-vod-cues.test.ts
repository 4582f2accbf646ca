// Issue 33 item 2: SCTE-35 cues in a static MPD's EventStreams (both SCTE 214 schemes, splice_insert and time_signal)
// place the breaks of a DASH VOD: each replaces the content under it with its ads' Periods, the content resuming at the
// break's end with its media time; a malformed cue is ignored and counted.
import fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { generateMedia } from '../../fixtures/generate-media.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_CLIP_SECONDS, DashOrigin } from '../../fixtures/dash-origin.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { encodeScte35 } from '../../media/scte35-encoder.js';
import { readTestMpd } from '../helpers/dash-mpd.js';
import { closeDashSuite, startDashSuite, type DashSuite } from './dash-setup.js';
import type { SsaiHarness } from './setup.js';

/** The encode's MPD with an EventStream of each scheme added to its Period. */
async function withCues(dir: string): Promise<string> {
  const mpd = await readFile(path.join(dir, 'vod/cmaf/manifest.mpd'), 'utf8');
  // a splice_insert out of network for 6 s, in binary, at 2 s
  const insert = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 101, outOfNetwork: true, breakDuration: 6 * 90_000, autoReturn: true, availNum: 1, availsExpected: 1 } }).base64;
  const bin = `<EventStream schemeIdUri="urn:scte:scte35:2014:xml+bin" timescale="1000">
<Event presentationTime="2000" duration="6000" id="1"><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>${insert}</Binary></Signal></Event>
<Event presentationTime="6000" id="9"><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>bm90IGEgY3Vl</Binary></Signal></Event>
</EventStream>`;
  // a time_signal with a provider placement opportunity start (0x34) of 4 s, as XML, at 10 s
  const xml = `<EventStream schemeIdUri="urn:scte:scte35:2013:xml" timescale="90000">
<Event presentationTime="900000" id="2"><scte35:SpliceInfoSection xmlns:scte35="http://www.scte.org/schemas/35/2016" ptsAdjustment="0" tier="4095">
<scte35:TimeSignal><scte35:SpliceTime ptsTime="900000"/></scte35:TimeSignal>
<scte35:SegmentationDescriptor segmentationEventId="102" segmentationEventCancelIndicator="false" segmentationDuration="360000" segmentationTypeId="52" segmentNum="1" segmentsExpected="1"/>
</scte35:SpliceInfoSection></Event>
</EventStream>`;
  return mpd.replace(/(<Period[^>]*>)/, `$1\n${bin}\n${xml}\n`);
}

describe('DASH VOD with SCTE-35 EventStream cues through the proxy', () => {
  let s: DashSuite<DashOrigin> | undefined;
  let h: SsaiHarness;
  let origin: DashOrigin;
  let guid: string;

  beforeAll(async () => {
    const cues = DashOrigin.start().then(async (o) => { o.overrides.set('/vod/cmaf/cues.mpd', await withCues(o.dir)); return o; });
    // vast4: ads a (6 s) and b (4 s); each break takes those that fit its length
    ({ h, origin, guid } = s = await startDashSuite(cues, '/vast4'));
  }, 240_000);
  afterAll(() => closeDashSuite(s));

  it('fills the part of a break the ads leave with the configuration\'s slate, as a Period of its own', async () => {
    const png = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'engine-dash-slate-')), 'slate.png');
    await generateMedia('image', png);
    const images = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(fs.readFileSync(png)));
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
    try {
      const created = await h.engine.api('POST', '/broker/adinserts', {
        headers: h.auth,
        // vast3: ad a (6 s) alone, shorter than neither break of 6 s, longer than the one of 4 s
        body: { name: 'slate', type: 'broker', ad_server: `${h.vast.url}/vast3`, source_url: `${origin.url}/`, slate_ad: `http://127.0.0.1:${(images.address() as AddressInfo).port}/slate.png` },
      });
      expect(created.status).toBe(200);
      const url = `${h.engine.url}/v1/dash/${created.body.guid}/vod/cmaf/cues.mpd`;
      const mpd = readTestMpd((await h.get(url)).text, url);
      expect(mpd.periods.map((p) => [p.id, p.duration])).toEqual([['content-0', 2], ['scte-101-0', AD_SECONDS.a], ['content-1', 2], ['scte-102-0', 4], ['content-2', 2]]);
      // the slate's Period is addressed as an ad's: its segments through the segment route, to the slate's media
      const slate = mpd.periods[3]!.sets[0]!.representations[0]!;
      const got = await h.get(slate.segments[0]!.url);
      expect(got.status).toBe(302);
      expect(got.headers.get('location')).toMatch(/\/media\/creatives\/slate-/);
    } finally {
      await new Promise<void>((r) => images.close(() => r()));
    }
  }, 120_000);

  it('replaces the content under each cue with its ads, the content resuming at the break\'s end', async () => {
    const url = `${h.engine.url}/v1/dash/${guid}/vod/cmaf/cues.mpd`;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    const mpd = readTestMpd(res.text, url);
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([
      ['content-0', 0, 2], ['scte-101-0', 2, AD_SECONDS.a], ['content-1', 8, 2], ['scte-102-0', 10, AD_SECONDS.b], ['content-2', 14, 2],
    ]);
    // the replaced content is gone, the rest keeps its media time: 8 s after the first break, 14 s after the second
    for (const [id, at] of [['content-1', 8], ['content-2', 14]] as const) {
      const rep = mpd.periods.find((p) => p.id === id)!.sets[0]!.representations[0]!;
      expect(rep.presentationTimeOffset / rep.timescale, id).toBe(at);
      expect(rep.segments[0]!.t / rep.timescale, id).toBe(at);
    }
    expect(mpd.duration).toBe(DASH_CLIP_SECONDS);
    // the cues are consumed: no EventStream is passed on
    expect(res.text).not.toContain('EventStream');
    // the ad server was asked with each break's length
    const asked = h.vast.requests.filter((r) => r.path === '/vast4');
    expect(asked.length).toBe(2);
  });

  it('counts the cue it could not read and places no break for it', async () => {
    const count = async (): Promise<number> => Number(/ssai_cue_errors_total\{reason="bad_scte35"\} (\d+)/.exec((await h.get('/metrics')).text)?.[1] ?? 0);
    const before = await count();
    const res = await h.get(`/v1/dash/${guid}/vod/cmaf/cues.mpd`);
    expect(res.text).not.toContain('id="dash-9');
    expect(await count()).toBe(before + 1);
  });

  it('answers 404 SESSION_NOT_FOUND for a session of another configuration, and leaves that session as it was', async () => {
    const other = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    const sid = /\/v1\/segment\/[^/]+\/([^/]+)\//.exec((await h.get(`/v1/dash/${guid}/vod/cmaf/cues.mpd`)).text)?.[1];
    expect(sid).toBeDefined();
    const first = await h.get(`/v1/dash/${guid}/vod/cmaf/cues.mpd?sessionId=${sid}`);
    const foreign = await h.get(`/v1/dash/${other}/vod/cmaf/cues.mpd?sessionId=${sid}`);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.text)).toMatchObject({ code: 'SESSION_NOT_FOUND' });
    const again = await h.get(`/v1/dash/${guid}/vod/cmaf/cues.mpd?sessionId=${sid}`);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
  });
});
