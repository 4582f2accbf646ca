import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OriginFetcher, type OriginResult } from '../../../ssai/serve/origin-fetcher.js';

const playlist = (n: number) => `#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:${n}\n#EXTINF:2,\n${n}.ts\n`;
const text = (r: OriginResult) => (r.ok ? r.text : `error ${r.error.code}`);

/** An origin whose answers after the first wait until the test releases them. */
async function heldOrigin() {
  let served = 0;
  const held: Array<() => void> = [];
  const server = http.createServer((_req, res) => {
    const n = served++;
    const answer = () => { res.writeHead(200).end(playlist(n)); };
    if (n === 0) answer(); else held.push(answer);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/live.m3u8`,
    release: () => { for (const f of held.splice(0)) f(); },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

let clock = 0;
const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => { for (const f of cleanup.splice(0)) await f(); });

describe('origin fetcher deadline', () => {
  it('gives the previous copy while a refresh is slower than its deadline, the fresh one once it lands', async () => {
    const origin = await heldOrigin();
    const fetcher = new OriginFetcher({ cacheMs: 1000, staleAfterMs: 20, now: () => clock });
    cleanup.push(() => fetcher.close(), origin.close);
    clock = 0;
    expect(fetcher.fetchNow(origin.url)).toBeUndefined(); // nothing cached: fetch() asks the origin
    expect(text(await fetcher.fetch(origin.url))).toBe(playlist(0));
    // cached and fresh: the same copy without a wait
    expect(fetcher.fetchNow(origin.url)).toBe(await fetcher.fetch(origin.url));
    clock = 1500; // expired: a refresh starts and the origin holds it
    expect(fetcher.fetchNow(origin.url)).toBeUndefined();
    const waiting = [fetcher.fetch(origin.url), fetcher.fetch(origin.url)];
    expect((await Promise.all(waiting)).map(text)).toEqual([playlist(0), playlist(0)]);
    origin.release();
    // the fresh copy is served once the held refresh lands (polled: a loaded machine may take more than a few ms)
    let latest = text(await fetcher.fetch(origin.url));
    for (let i = 0; i < 500 && latest !== playlist(1); i++) {
      await new Promise((r) => setTimeout(r, 10));
      latest = text(await fetcher.fetch(origin.url));
    }
    expect(latest).toBe(playlist(1));
  });

  it('waits for the refresh when told to, or when the previous copy is too old', async () => {
    const origin = await heldOrigin();
    const strict = new OriginFetcher({ cacheMs: 1000, staleAfterMs: 0, now: () => clock });
    const old = new OriginFetcher({ cacheMs: 1000, staleAfterMs: 20, staleMaxMs: 2000, now: () => clock });
    cleanup.push(() => strict.close(), () => old.close(), origin.close);
    clock = 0;
    await strict.fetch(origin.url); // served 0
    const settled: string[] = [];
    clock = 1500;
    const a = strict.fetch(origin.url).then((r) => { settled.push(`strict ${text(r)}`); });
    const b = old.fetch(origin.url).then((r) => { settled.push(`old ${text(r)}`); }); // no copy yet: it waits
    await new Promise((r) => setTimeout(r, 60));
    expect(settled).toEqual([]);
    origin.release();
    await Promise.all([a, b]);
    expect(settled.sort()).toEqual([`old ${playlist(2)}`, `strict ${playlist(1)}`].sort());
    clock = 1500 + 1000 + 2500; // the copy expired 2.5 s ago, past staleMaxMs
    const late = old.fetch(origin.url).then((r) => { settled.push(`late ${text(r)}`); });
    await new Promise((r) => setTimeout(r, 60));
    expect(settled).toHaveLength(2);
    origin.release();
    await late;
    expect(settled[2]).toBe(`late ${playlist(3)}`);
  });
});
