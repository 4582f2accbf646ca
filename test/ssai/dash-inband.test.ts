// Issue 33 item 2, InbandEventStream: a DASH VOD whose segments carry SCTE-35 in emsg boxes (version 0 and 1, the SCTE
// 35 standard's sample sections and one of the engine's encoder as message_data) through the proxy. The proxy reads
// the segments of the smallest Representation that announces them, once for every viewer, and places the breaks as
// an EventStream's: the content under each replaced by its ads' Periods, the content resuming with its media time.
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASH_CLIP_SECONDS } from '../../fixtures/dash-origin.js';
import { DashInbandOrigin, INBAND_MPD_PATH } from '../../fixtures/dash-inband-origin.js';
import { SCTE35_INBAND_SCHEME as INBAND_SCHEME } from '../../ssai/parse/emsg-cues.js';
import type { EmsgInput } from '../../fixtures/emsg-boxes.js';
import { AD_SECONDS } from '../../fixtures/vast-server.js';
import { encodeScte35 } from '../../media/scte35-encoder.js';
import { scte35Bytes } from '../../media/scte35.js';
import { decodeRepresentation, readTestMpd } from '../helpers/dash-mpd.js';
import { VECTORS_DIR, vectorPath } from '../helpers/vectors.js';
import { closeDashSuite, startDashSuite, type DashSuite } from './dash-setup.js';
import type { SsaiHarness } from './setup.js';

describe.skipIf(!VECTORS_DIR)('DASH VOD with SCTE-35 in emsg boxes (InbandEventStream) through the proxy', () => {
  let s: DashSuite<DashInbandOrigin> | undefined;
  let h: SsaiHarness;
  let origin: DashInbandOrigin;
  let guid: string;

  beforeAll(async () => {
    const samples = (JSON.parse(await readFile(vectorPath('scte35-samples.json'), 'utf8')) as { samples: Array<{ name: string; base64: string }> }).samples;
    const sample = (name: string): Uint8Array => scte35Bytes(samples.find((s) => s.name.startsWith(name))!.base64)!;
    // the standard's splice_insert (a break of 60.3 s: it replaces the content to the end) 12 s in, as version 0
    // boxes counted from their segments' starts, repeated in the two segments before the splice as packagers do
    const tail = (delta: number): EmsgInput => ({ version: 0, schemeIdUri: INBAND_SCHEME, timescale: 1000, time: delta, id: 2, messageData: sample('14.2') });
    // a splice_insert of 6 s at 2 s as a version 1 box on the media timeline (90 kHz)
    const six = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 201, outOfNetwork: true, breakDuration: 6 * 90_000, autoReturn: true } }).bytes;
    const corrupt = sample('14.1').slice();
    corrupt[corrupt.length - 1]! ^= 0xff;
    // rung 1 (256x144, 200 kb/s) is the smallest Representation of the video AdaptationSet that announces them
    const planned = DashInbandOrigin.start({
      'chunk_1_00001.m4s': [
        { version: 1, schemeIdUri: INBAND_SCHEME, timescale: 90_000, time: 2 * 90_000, eventDuration: 6 * 90_000, id: 1, messageData: six },
        // the standard's program start and end: no break
        { version: 0, schemeIdUri: INBAND_SCHEME, timescale: 1, time: 1, id: 3, messageData: sample('14.4') },
      ],
      'chunk_1_00003.m4s': [{ version: 0, schemeIdUri: INBAND_SCHEME, timescale: 1, time: 0, id: 4, messageData: corrupt }],
      'chunk_1_00005.m4s': [tail(4000)],
      'chunk_1_00006.m4s': [tail(2000), { version: 0, schemeIdUri: 'urn:mpeg:dash:event:2012', value: '1', timescale: 1, time: 0, id: 5, messageData: new Uint8Array(2) }],
    });
    // vast4: ads a (6 s) and b (4 s); each break takes those that fit its length
    ({ h, origin, guid } = s = await startDashSuite(planned, '/vast4'));
  }, 240_000);
  afterAll(() => closeDashSuite(s));

  it('places the breaks the emsg boxes carry: v1 on the media timeline, v0 from its segment\'s start, the content resuming with its media time', async () => {
    const url = `${h.engine.url}/v1/dash/${guid}/${INBAND_MPD_PATH}`;
    // the first viewer's MPD starts the segments' reads (it waits for them, up to a deadline a loaded machine may pass)
    expect((await h.get(url)).status).toBe(200);
    while (!/ssai_dash_inband_segments_total\{result="read"\} 8\b/.test((await h.get('/metrics')).text)) await new Promise((r) => setTimeout(r, 100));
    const asked = h.vast.requests.length;
    const res = await h.get(url);
    expect(res.status, res.text).toBe(200);
    const mpd = readTestMpd(res.text, url);
    expect(mpd.periods.map((p) => [p.id, p.start, p.duration])).toEqual([
      ['content-0', 0, 2], ['scte-201-0', 2, AD_SECONDS.a], ['content-1', 8, 4], ['scte-1207959695-0', 12, AD_SECONDS.b],
    ]);
    expect(mpd.duration).toBe(DASH_CLIP_SECONDS);
    for (const set of mpd.periods[2]!.sets.filter((s) => s.contentType !== 'text')) for (const rep of set.representations) {
      expect(rep.presentationTimeOffset / rep.timescale, rep.id).toBe(8);
      expect(Math.abs(rep.segments[0]!.t / rep.timescale - 8), rep.id).toBeLessThan(0.1);
    }
    // the ad server was asked for each break's length: 6 s, then the 4 s left of the clip
    expect(h.vast.requests.slice(asked).filter((r) => r.path === '/vast4').length).toBe(2);
    // the ad Periods decode (ffmpeg), as long as their ads
    const dir = await mkdtemp(path.join(os.tmpdir(), 'engine-dash-inband-decode-'));
    for (const p of [mpd.periods[1]!, mpd.periods[3]!]) {
      const video = p.sets.find((s) => s.contentType === 'video')!.representations[0]!;
      const decoded = await decodeRepresentation(video, dir, `${p.id}-${video.id}`);
      expect(decoded.errors, p.id).toBe('');
      expect(Math.abs(decoded.seconds - p.duration), p.id).toBeLessThan(0.2);
    }
  }, 120_000);

  it('reads each segment of the one Representation once for every viewer, and counts the section it could not read', async () => {
    const cueErrors = Number(/ssai_cue_errors_total\{reason="bad_scte35"\} (\d+)/.exec((await h.get('/metrics')).text)?.[1] ?? 0);
    for (let viewer = 0; viewer < 3; viewer++) {
      const res = await h.get(`/v1/dash/${guid}/${INBAND_MPD_PATH}`);
      expect(res.text).toContain('<Period id="scte-201-0"');
    }
    // the smallest video rung's 8 segments once each; the other rung and the audio (no InbandEventStream) never
    for (let n = 1; n <= 8; n++) expect(origin.count(new RegExp(`/chunk_1_0000${n}\\.m4s$`)), `segment ${n}`).toBe(1);
    expect(origin.count(/\/chunk_[02]_/)).toBe(0);
    const metrics = (await h.get('/metrics')).text;
    expect(metrics).toMatch(/ssai_dash_inband_segments_total\{result="read"\} 8\b/);
    // the corrupt section was counted once, with the reads (not once per viewer)
    expect(cueErrors).toBe(1);
    expect(Number(/ssai_cue_errors_total\{reason="bad_scte35"\} (\d+)/.exec(metrics)?.[1])).toBe(1);
    // ad_marker_passthrough on (the default): the content Periods keep the origin's InbandEventStream, the ad Periods carry none
    const periods = (await h.get(`/v1/dash/${guid}/${INBAND_MPD_PATH}`)).text.split('<Period').slice(1);
    for (const period of periods) expect(period.includes('scte35:2013:bin'), period.slice(0, 80)).toBe(/^[^>]*id="content-/.test(period));
  });
});
