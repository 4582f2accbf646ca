// The proxy's hot path (issue 5 "Speed by design"): origin playlists fetched and parsed once per refresh, session
// decisions read from the store once per process, sessions kept compact in the memory store.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derive, OriginFetcher } from '../../ssai/serve/origin-fetcher.js';
import { MemorySessionStore } from '../../ssai/store/session-store.js';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { startSsai, variantUrls, type SsaiHarness } from './setup.js';

function livePlaylist(seq: number, td = 4): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${td}`, `#EXT-X-MEDIA-SEQUENCE:${seq}`];
  for (let i = 0; i < 3; i++) lines.push(`#EXTINF:${td}.0,`, `seg${seq + i}.ts`);
  return lines.join('\n') + '\n';
}

describe('origin fetcher: one fetch per origin refresh', () => {
  let server: http.Server;
  let url = '';
  let body = livePlaylist(10);
  let hits = 0;
  let clock = 1_000_000;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
      res.end(req.url === '/master.m3u8' ? '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n' : req.url === '/vod.m3u8' ? `${livePlaylist(0)}#EXT-X-ENDLIST\n` : body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); });

  it('reuses a live playlist until one target duration after the fetch that saw it change, half a target duration when it had not', async () => {
    const fetcher = new OriginFetcher({ now: () => clock });
    hits = 0;
    const many = await Promise.all(Array.from({ length: 50 }, () => fetcher.fetch(`${url}/live.m3u8`)));
    expect(hits).toBe(1); // single flight
    const first = many[0]!;
    if (!first.ok) throw new Error('fetch failed');
    const parsed = derive(first, 'n', () => ({ parsedAt: clock }));
    clock += 3_900; // target duration 4 s
    const cached = await fetcher.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(1);
    expect(cached).toBe(first);
    expect(derive(cached as typeof first, 'n', () => ({ parsedAt: -1 }))).toBe(parsed); // one parse shared

    clock += 200; // past the target duration: the origin has not refreshed yet
    const unchanged = await fetcher.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(2);
    expect(unchanged).toBe(first); // same text: the derived values stay shared
    clock += 1_900;
    await fetcher.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(2);
    clock += 200; // half a target duration later: look again
    body = livePlaylist(11);
    const changed = await fetcher.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(3);
    expect(changed.ok && changed.text).toBe(body);
    expect(changed).not.toBe(first);
    clock += 3_999;
    await fetcher.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(3);
    clock += 2;
    await fetcher.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(4);
    await fetcher.close();
  });

  it('caches multivariant and VOD playlists by a fixed time, a given cacheMs exactly, and nothing with 0', async () => {
    const auto = new OriginFetcher({ now: () => clock });
    hits = 0;
    await auto.fetch(`${url}/master.m3u8`);
    await auto.fetch(`${url}/vod.m3u8`);
    clock += 1_999;
    await auto.fetch(`${url}/master.m3u8`);
    expect(hits).toBe(2);
    clock += 2;
    await auto.fetch(`${url}/master.m3u8`);
    await auto.fetch(`${url}/vod.m3u8`);
    expect(hits).toBe(3);
    await auto.close();

    const fixed = new OriginFetcher({ now: () => clock, cacheMs: 500 });
    hits = 0;
    await fixed.fetch(`${url}/live.m3u8`);
    clock += 499;
    await fixed.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(1);
    clock += 1;
    await fixed.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(2);
    await fixed.close();

    const none = new OriginFetcher({ now: () => clock, cacheMs: 0 });
    hits = 0;
    await Promise.all([none.fetch(`${url}/live.m3u8`), none.fetch(`${url}/live.m3u8`)]);
    await none.fetch(`${url}/live.m3u8`);
    expect(hits).toBe(2);
    await none.close();
  });
});

describe('memory session store: compact, read without parsing', () => {
  it('hands out frozen copies, shares repeated parts between keys and forgets short-lived entries', async () => {
    const store = new MemorySessionStore();
    const tracking = { start: ['http://ads.example/track/start?ad=1'], complete: ['http://ads.example/track/complete?ad=1'] };
    const original = { id: 'a', ads: [{ adId: 'x', tracking }], when: undefined as number | undefined };
    await store.set('avail:s1:a', original, 60_000 * 10);
    await store.set('avail:s2:a', { id: 'a', ads: [{ adId: 'x', tracking }] }, 60_000 * 10);
    const one = await store.get<typeof original>('avail:s1:a');
    const two = await store.get<typeof original>('avail:s2:a');
    expect(one).toEqual({ id: 'a', ads: [{ adId: 'x', tracking }] });
    expect(one).not.toBe(original); // a copy: later changes by the writer do not leak in
    expect(await store.get('avail:s1:a')).toBe(one); // no parse per read
    expect(Object.isFrozen(one)).toBe(true);
    expect(() => { (one as { id: string }).id = 'b'; }).toThrow(TypeError);
    expect(one!.ads).toBe(two!.ads); // the same ad plan is held once
    const created = await store.setIfAbsent('lock:s1:a', 1, 50);
    expect(created.created).toBe(true);
    expect((await store.setIfAbsent('lock:s1:a', 2, 50)).value).toBe(1);
    await new Promise((r) => setTimeout(r, 80));
    expect(await store.get('lock:s1:a')).toBeUndefined();
    await store.close();
  });
});

describe('proxy hot path', () => {
  let h: SsaiHarness;
  let guid: string;

  beforeAll(async () => {
    h = await startSsai({ origin: { cueForm: 'cue-out' } });
    guid = await h.configure('/vast4');
  });
  afterAll(async () => h?.close());

  it('reads no session, decision or creative from the store once a session has decided', async () => {
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const runtime = h.engine.ctx.services.ssai!;
    const sessions: string[] = [];
    for (let i = 0; i < 5; i++) {
      const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
      sessions.push(variantUrls(master.text).find((u) => u.endsWith('/0.m3u8'))!);
    }
    const first = await Promise.all(sessions.map((u) => h.get(u)));
    for (const r of first) expect(r.text).toContain('/v1/segment/');
    const reads: string[] = [];
    const get = runtime.store.get.bind(runtime.store);
    runtime.store.get = async <T>(key: string) => { reads.push(key); return get<T>(key); };
    try {
      const again = await Promise.all([...sessions, ...sessions].map((u) => h.get(u)));
      again.forEach((r, i) => expect(r.text).toBe(first[i % sessions.length]!.text));
    } finally {
      runtime.store.get = get;
    }
    expect(reads.filter((k) => !k.startsWith('obs:'))).toEqual([]);
  });

  it('gives sessions with the same ads the same playlist but for their own session id in the tracking URIs', async () => {
    const paths: string[] = [];
    for (let i = 0; i < 2; i++) {
      const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
      paths.push(variantUrls(master.text).find((u) => u.endsWith('/0.m3u8'))!);
    }
    const [a, b] = await Promise.all(paths.map((u) => h.get(u)));
    const sidA = paths[0]!.split('/')[4]!;
    const sidB = paths[1]!.split('/')[4]!;
    expect(a!.text).toContain(`/v1/segment/${guid}/${sidA}/`);
    expect(a!.text).not.toContain(sidB);
    expect(b!.text).not.toContain(sidA);
    expect(b!.text.split(sidB).join('SID')).toBe(a!.text.split(sidA).join('SID'));
  });

  it('keeps a session in the store as ids and a shared layout key, not its variant URLs', async () => {
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8`);
    const sid = variantUrls(master.text)[0]!.split('/')[4]!;
    const stored = await h.engine.ctx.services.ssai!.store.get<Record<string, unknown>>(`session:${sid}`);
    expect(stored).toMatchObject({ id: sid, guid, layout: expect.any(String) });
    expect(stored).not.toHaveProperty('variants');
    const layout = await h.engine.ctx.services.ssai!.store.get<{ variants: unknown[] }>(`layout:${stored!.layout as string}`);
    expect(layout!.variants.length).toBeGreaterThan(1);
  });
});
