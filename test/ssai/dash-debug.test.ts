// Issue 31 item 8 on DASH sessions (issue 33 item 3), through the real proxy: a DASH session started with ads.debug=1
// (or a session body's debug) keeps the same log as an HLS one: its start, every origin MPD fetch of its requests, the
// ad server's requests and raw answers, and each break's decision with its reason; read at GET /v1/debug/{guid}/{session}.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashOrigin } from '../../fixtures/dash-origin.js';
import { encodeScte35 } from '../../media/scte35-encoder.js';
import type { DebugEntry } from '../../ssai/store/debug-log.js';
import { startSsai, type SsaiHarness } from './setup.js';
import { untilAViewerHasAds } from './dash-setup.js';

const MPD = 'vod/cmaf/debug.mpd';
type Log = { status: boolean; guid: string; session: string; entries: DebugEntry[] };
const ofKind = <K extends DebugEntry['kind']>(log: Log, kind: K) => log.entries.filter((e): e is Extract<DebugEntry, { kind: K }> => e.kind === kind);

describe('the debug log of a DASH session', () => {
  let h: SsaiHarness;
  let origin: DashOrigin;
  let guid: string;
  let originText: string;

  beforeAll(async () => {
    origin = await DashOrigin.start();
    // one 10 s SCTE-35 break at 4 s
    const cue = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 7, outOfNetwork: true, breakDuration: 10 * 90_000, autoReturn: true, availNum: 1, availsExpected: 1 } }).base64;
    originText = (await readFile(path.join(origin.dir, 'vod/cmaf/manifest.mpd'), 'utf8')).replace(/(<Period[^>]*>)/, `$1
<EventStream schemeIdUri="urn:scte:scte35:2014:xml+bin" timescale="1000"><Event presentationTime="4000" duration="10000" id="1"><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>${cue}</Binary></Signal></Event></EventStream>`);
    origin.overrides.set(`/${MPD}`, originText);
    h = await startSsai();
    // vast4: ads a (6 s) and b (4 s), the break filled
    guid = await h.configure('/vast4', { type: 'broker', source: `${origin.url}/` });
    // the creatives prepared before the debug sessions decide (a viewer without debug opened until it has its ads)
    await untilAViewerHasAds(async () => (await h.get(`/v1/dash/${guid}/${MPD}`)).text);
  }, 240_000);

  afterAll(async () => {
    await h?.close();
    await origin?.close();
  });

  const sidOf = (text: string): string => /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(text)![1]!;
  const readLog = async (sid: string): Promise<{ status: number; log: Log }> => {
    const r = await h.get(`/v1/debug/${guid}/${sid}`, { headers: h.auth });
    return { status: r.status, log: JSON.parse(r.text) as Log };
  };
  /** The log once it holds `n` entries of `kind` (entries are stored aside the answer: waited for). */
  const logWith = async (sid: string, kind: DebugEntry['kind'], n: number): Promise<Log> => {
    await expect.poll(async () => { const r = await readLog(sid); return r.status === 200 ? ofKind(r.log, kind).length : 0; }, { timeout: 10_000 }).toBeGreaterThanOrEqual(n);
    return (await readLog(sid)).log;
  };

  it('logs the session, its origin MPD fetches, the ad server\'s request and answer and the break\'s decision', async () => {
    const first = await h.get(`/v1/dash/${guid}/${MPD}?ads.debug=1`);
    expect(first.status, first.text).toBe(200);
    const sid = sidOf(first.text);
    let log = await logWith(sid, 'decision', 1);
    expect(log.session).toBe(sid);
    const [start] = ofKind(log, 'session');
    expect(start).toMatchObject({ mode: 'stitched', origin: `${origin.url}/${MPD}`, playerParams: {} });
    const [fetched] = ofKind(log, 'origin');
    expect(fetched).toMatchObject({ url: `${origin.url}/${MPD}`, status: 200, bytes: Buffer.byteLength(originText) });
    const asked = ofKind(log, 'ad-request');
    expect(asked.length).toBe(1);
    expect(asked[0]).toMatchObject({ availId: 'scte-7', status: 200 });
    expect(asked[0]!.url).toContain('/vast4');
    expect(asked[0]!.answer).toContain('<VAST version="4.0">');
    const [decision] = ofKind(log, 'decision');
    expect(decision).toMatchObject({ availId: 'scte-7', outcome: 'filled' });
    expect((decision!.details as { ads: Array<{ adId: string; duration: number }> }).ads.map((a) => [a.adId, a.duration])).toEqual([['ad-a', 6], ['ad-b', 4]]);

    // the session's MPD again: one more origin fetch logged, no second decision (one per viewer and break)
    const again = await h.get(`/v1/dash/${guid}/${MPD}?sessionId=${sid}`);
    expect(again.text).toBe(first.text);
    log = await logWith(sid, 'origin', 2);
    expect(ofKind(log, 'decision').length).toBe(1);
    expect(ofKind(log, 'ad-request').length).toBe(1);
  });

  it('keeps a log for a DASH session opened with the session body\'s debug, and none for a session without', async () => {
    const opened = await h.get(`/v1/session/${guid}/${MPD}`, { method: 'POST', body: JSON.stringify({ debug: true }) });
    expect(opened.status, opened.text).toBe(200);
    const { manifestUrl } = JSON.parse(opened.text) as { manifestUrl: string };
    const sid = new URL(manifestUrl, h.engine.url).searchParams.get('sessionId')!;
    expect((await h.get(manifestUrl)).status).toBe(200);
    const log = await logWith(sid, 'decision', 1);
    expect(ofKind(log, 'session').length).toBe(1);
    expect(ofKind(log, 'decision')[0]).toMatchObject({ availId: 'scte-7', outcome: 'filled' });

    const plain = await h.get(`/v1/dash/${guid}/${MPD}`);
    const none = await h.get(`/v1/debug/${guid}/${sidOf(plain.text)}`, { headers: h.auth });
    expect(none.status).toBe(404);
    expect(JSON.parse(none.text)).toMatchObject({ code: 'DEBUG_LOG_NOT_FOUND' });
  });

  it('answers a bad ads.debug with 400 BAD_DEBUG_FLAG naming the parameter', async () => {
    const bad = await h.get(`/v1/dash/${guid}/${MPD}?ads.debug=maybe`);
    expect(bad.status).toBe(400);
    const body = JSON.parse(bad.text) as { code: string; description: string };
    expect(body.code).toBe('BAD_DEBUG_FLAG');
    expect(body.description).toContain('ads.debug');
  });
});
