// The fast GET path (kernel/http/fast-get.ts) in the engine: a viewer's media playlists and ad segments are answered
// before node:http (SSAI_FAST_GET=true) with the same replies node:http gives (SSAI_FAST_GET=false, the default), and the rest of a connection's
// requests (a session start, the API) still reach node:http.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { segmentUris, startSsai, variantUrls, type SsaiHarness } from './setup.js';

type Seen = { status: number; headers: Record<string, string | undefined>; ads: number; body: string };

/** One viewer on one kept-alive connection: master, video playlist, first ad segment (HEAD and GET), the API. */
async function play(h: SsaiHarness, guid: string): Promise<{ master: Seen; media: Seen; head: Seen; segment: Seen; api: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const base = h.engine.url;
  const ask = (path: string, method = 'GET'): Promise<Seen> => new Promise((resolve, reject) => {
    http.request(`${base}${path}`, { method, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      const header = (name: string): string | undefined => { const v = res.headers[name]; return Array.isArray(v) ? v.join(', ') : v; };
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, body, ads: segmentUris(body).filter((u) => u.startsWith('/v1/segment/')).length,
        headers: { type: header('content-type'), cors: header('access-control-allow-origin'), nosniff: header('x-content-type-options'), cache: header('cache-control'), location: header('location'), length: header('content-length') },
      }));
    }).on('error', reject).end();
  });
  try {
    const master = await ask(`/v1/master/${guid}/live/master.m3u8`);
    const video = variantUrls(master.body).find((u) => /\/\d+\.m3u8$/.test(u) && !master.body.includes(`URI="${u}"`))!;
    const media = await ask(video);
    const ad = segmentUris(media.body).find((u) => u.startsWith('/v1/segment/'))!;
    const head = await ask(ad, 'HEAD');
    const segment = await ask(ad);
    const api = (await ask('/healthz')).status;
    return { master, media, head, segment, api };
  } finally {
    agent.destroy();
  }
}

const metric = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

describe('fast GET path in the engine', () => {
  let fast: SsaiHarness;
  let plain: SsaiHarness;
  let fastGuid: string;
  let plainGuid: string;

  beforeAll(async () => {
    [fast, plain] = await Promise.all([startSsai({ env: { SSAI_FAST_GET: 'true' } }), startSsai({ env: { SSAI_FAST_GET: 'false' } })]);
    [fastGuid, plainGuid] = await Promise.all([fast.configure('/vast3'), plain.configure('/vast3')]);
    for (const h of [fast, plain]) h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
  });
  afterAll(async () => { await Promise.all([fast?.close(), plain?.close()]); });

  it('answers playlists and ad segments as node:http does, and hands the rest of the connection over', async () => {
    const [a, b] = [await play(fast, fastGuid), await play(plain, plainGuid)];
    for (const [seen, other] of [[a.master, b.master], [a.media, b.media], [a.segment, b.segment], [a.head, b.head]] as const) {
      expect(seen.status).toBe(other.status);
      expect({ ...seen.headers, location: undefined, length: undefined }).toEqual({ ...other.headers, location: undefined, length: undefined });
    }
    expect(a.media.status).toBe(200);
    expect(a.media.ads).toBeGreaterThan(0);
    expect(a.media.ads).toBe(b.media.ads);
    expect(a.media.headers.length).toBe(String(Buffer.byteLength(a.media.body)));
    expect(a.segment.status).toBe(302);
    expect(a.segment.headers.location).toMatch(/\/media\/creatives\/.+\.m4s$/);
    expect(a.api).toBe(200);
    expect(b.api).toBe(200);
    const fastMetrics = (await fast.engine.api('GET', '/metrics')).body as string;
    // the master, the playlist, the HEAD and the GET of the ad segment answered on the fast path; /healthz handed the
    // connection to node:http
    expect(metric(fastMetrics, 'engine_fast_get_requests_total')).toBeGreaterThanOrEqual(4);
    expect(metric(fastMetrics, 'engine_fast_get_handovers_total')).toBeGreaterThan(0);
    expect(metric((await plain.engine.api('GET', '/metrics')).body as string, 'engine_fast_get_requests_total')).toBeUndefined();
  });

  it('answers a playlist reload on a connection that began with one', async () => {
    const master = await fast.get(`/v1/master/${fastGuid}/live/master.m3u8`);
    const video = variantUrls(master.text).find((u) => /\/\d+\.m3u8$/.test(u))!;
    const before = metric((await fast.engine.api('GET', '/metrics')).body as string, 'engine_fast_get_requests_total') ?? 0;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const reload = (): Promise<number> => new Promise((resolve, reject) => {
      http.get(`${fast.engine.url}${video}`, { agent }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); }).on('error', reject);
    });
    expect([await reload(), await reload(), await reload()]).toEqual([200, 200, 200]);
    agent.destroy();
    const after = metric((await fast.engine.api('GET', '/metrics')).body as string, 'engine_fast_get_requests_total') ?? 0;
    expect(after - before).toBe(3);
  });
});
