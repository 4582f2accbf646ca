import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { segmentUris, startSsai, variantUrls, type SsaiHarness } from './setup.js';

async function metric(h: SsaiHarness, name: string, labels: string): Promise<number> {
  const text = await h.engine.ctx.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('failures of the origin and the ad server', () => {
  let h: SsaiHarness;

  beforeAll(async () => {
    h = await startSsai({ originTimeoutMs: 500, origin: { cueForm: 'daterange' } });
  });
  afterAll(async () => h?.close());
  const showBreak = () => { h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS; };

  it('answers 404 with a JSON error for an unknown configuration guid', async () => {
    const r = await h.get('/v1/master/00000000-0000-4000-8000-000000000000/live/master.m3u8');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text)).toMatchObject({ status: false, code: 'ADINSERT_NOT_FOUND' });
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('takes a malformed escape in the query (%zz) as written, as URLSearchParams does: a playlist, never a 5xx', async () => {
    const guid = await h.configure('/vast3');
    for (const query of ['ads.genre=%zz', 'ads.%E0%A4%A=1', 'sessionId=%', 'token=%zz&ads.x=%']) {
      const r = await h.get(`/v1/master/${guid}/live/master.m3u8?${query}`);
      expect(r.status, query).toBe(200);
      expect(r.text, query).toMatch(/^#EXTM3U/);
    }
  });

  it('answers 413 to a session request whose body is over 64 KiB, and the proxy keeps serving', async () => {
    const guid = await h.configure('/vast3');
    const big = JSON.stringify({ adsParams: { filler: 'x'.repeat(100 * 1024) } });
    const r = await h.get(`/v1/session/${guid}/live/master.m3u8`, { method: 'POST', body: big, headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text)).toMatchObject({ status: false, code: 'SESSION_BODY_TOO_LARGE' });
    const small = await h.get(`/v1/session/${guid}/live/master.m3u8`, { method: 'POST', body: '{"adsParams":{"genre":"news"}}' });
    expect(small.status).toBe(200);
    expect(JSON.parse(small.text).manifestUrl).toMatch(new RegExp(`^/v1/master/${guid}/live/master\\.m3u8\\?sessionId=`));
  });

  it('passes origin 4xx through, and turns timeouts into 504 and non-HLS or oversized bodies into 502', async () => {
    const guid = await h.configure('/vast3');
    const cases: Array<[Parameters<typeof setFault>[0], number, string, string]> = [
      [{ kind: 'status', status: 403 }, 403, 'ORIGIN_HTTP_ERROR', 'http_4xx'],
      [{ kind: 'slow', ms: 1500 }, 504, 'ORIGIN_TIMEOUT', 'timeout'],
      [{ kind: 'not-hls' }, 502, 'ORIGIN_NOT_HLS', 'not_hls'],
      [{ kind: 'too-large' }, 502, 'ORIGIN_TOO_LARGE', 'too_large'],
    ];
    function setFault(f: NonNullable<typeof h.origin.fault>) { h.origin.fault = f; }
    for (const [fault, status, code, reason] of cases) {
      setFault(fault);
      const before = await metric(h, 'ssai_origin_errors_total', `reason="${reason}"`);
      const r = await h.get(`/v1/master/${guid}/live/master.m3u8`);
      expect(r.status, code).toBe(status);
      expect(JSON.parse(r.text)).toMatchObject({ status: false, code });
      expect(await metric(h, 'ssai_origin_errors_total', `reason="${reason}"`)).toBe(before + 1);
    }
    h.origin.fault = undefined;
    expect((await h.get(`/v1/master/${guid}/live/nothing-here.m3u8`)).status).toBe(404);
  });

  it.each([
    ['/error', 'http'],
    ['/vast3?delayMs=5000', 'timeout'],
    ['/empty', 'empty'],
    ['/malformed', 'malformed'],
  ])('plays content through the avail when the ad server answers %s, and counts the reason', async (adPath, reason) => {
    showBreak();
    const guid = await h.configure(adPath);
    const before = await metric(h, 'ssai_ad_server_errors_total', `reason="${reason}"`);
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const video = variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
    const media = await h.get(video);
    expect(media.status).toBe(200);
    const uris = segmentUris(media.text);
    expect(uris.every((u) => u.startsWith(h.origin.url))).toBe(true);
    expect(uris).toHaveLength(6);
    expect(await metric(h, 'ssai_ad_server_errors_total', `reason="${reason}"`)).toBe(before + 1);
  }, 15_000);

  it('plays content when the ad server is down (connection refused)', async () => {
    showBreak();
    const created = await h.engine.api('POST', '/broker/adinserts', { headers: h.auth, body: { name: 'down', type: 'live', ad_server: 'http://127.0.0.1:9/vast', source_url: `${h.origin.url}/` } });
    const master = await h.get(`/v1/master/${created.body.guid}/live/master.m3u8`);
    const media = await h.get(variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!);
    expect(media.status).toBe(200);
    expect(segmentUris(media.text).every((u) => u.startsWith(h.origin.url))).toBe(true);
  });

  it('fetches an origin playlist once for many sessions asking at the same time', async () => {
    const guid = await h.configure('/vast3');
    const masters = await Promise.all(Array.from({ length: 20 }, () => h.get(`/v1/master/${guid}/live/master.m3u8`)));
    const before = h.origin.count('/live/v0.m3u8');
    h.origin.fault = { kind: 'slow', ms: 100 };
    await Promise.all(masters.map((m) => h.get(variantUrls(m.text).find((u) => !m.text.includes(`URI="${u}"`))!)));
    h.origin.fault = undefined;
    expect(h.origin.count('/live/v0.m3u8') - before).toBe(1);
  });
});
