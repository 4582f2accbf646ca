// Issue 26 §2: the origin fetcher with LL-HLS origins. A blocking reload (delivery directives in the URL) is bounded by
// its own, longer timeout, keyed with its directives (viewers waiting for one part share one request), and a
// low-latency playlist is refreshed every part target rather than every target duration.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OriginFetcher } from '../../../ssai/serve/origin-fetcher.js';

const LL = '#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART-INF:PART-TARGET=0.5\n#EXT-X-MEDIA-SEQUENCE:1\n#EXTINF:4,\n1.mp4\n';

/** An origin that holds requests carrying _HLS_msn for holdMs, and counts every request by URL. */
async function origin(holdMs: number) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    const answer = () => res.writeHead(200).end(LL);
    if (req.url?.includes('_HLS_msn')) setTimeout(answer, holdMs); else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ll.m3u8`, seen,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => { for (const f of cleanup.splice(0)) await f(); });

describe('origin fetcher with LL-HLS origins', () => {
  it('waits for a held blocking reload past the plain timeout, within the blocking bound, and shares it', async () => {
    const o = await origin(400);
    const fetcher = new OriginFetcher({ timeoutMs: 150, blockingTimeoutMs: 5000 });
    cleanup.push(() => fetcher.close(), o.close);
    const url = `${o.url}?_HLS_msn=2&_HLS_part=1`;
    const [a, b] = await Promise.all([fetcher.fetch(url, { blocking: true }), fetcher.fetch(url, { blocking: true })]);
    expect(a.ok && b.ok).toBe(true);
    expect(o.seen.filter((u) => u.includes('_HLS_msn=2&_HLS_part=1'))).toHaveLength(1);
    // The same hold without the blocking flag is bounded by the plain timeout.
    const plainBound = await fetcher.fetch(`${o.url}?_HLS_msn=3`);
    expect(plainBound.ok ? 'ok' : plainBound.error.code).toBe('ORIGIN_TIMEOUT');
  });

  it('refreshes a low-latency playlist every part target', async () => {
    const o = await origin(0);
    let clock = 0;
    const fetcher = new OriginFetcher({ now: () => clock, staleAfterMs: 0 });
    cleanup.push(() => fetcher.close(), o.close);
    await fetcher.fetch(o.url);
    clock = 300; // within the part target: the copy is reused
    await fetcher.fetch(o.url);
    expect(o.seen).toHaveLength(1);
    clock = 600; // past it (a target duration of 4 s would have kept the copy)
    await fetcher.fetch(o.url);
    expect(o.seen).toHaveLength(2);
  });
});
