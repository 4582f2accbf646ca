// The C load generator of bench/ssai-capacity counts what it sends: every scheduled reload reaches the server once and
// is answered, each viewer's new ad segment is fetched once, chunked and sized bodies and closed connections are read,
// and a slow reply shows as latency from the schedule. The figures of the capacity bench rest on these counts.
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNativeLoad, runNativeLoad } from '../../../bench/lib/native-load.js';

const hasCompiler = (() => {
  try { execFileSync(process.env.CC ?? 'cc', ['--version'], { stdio: 'ignore' }); return true; } catch { return false; }
})();
if (!hasCompiler) console.warn('open-loop-load: skipped, no C compiler (cc) on this machine to build the bench\'s load generator');

const PERIOD_MS = 500;
const SLOW_VIEWER = 7;

describe.skipIf(!hasCompiler)('bench: the C open-loop load generator', () => {
  let server: http.Server;
  let base = '';
  let mediaRequests = 0;
  const segmentsAsked = new Map<string, number>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = req.url ?? '';
      if (url.startsWith('/v1/segment/')) {
        segmentsAsked.set(url, (segmentsAsked.get(url) ?? 0) + 1);
        res.writeHead(302, { location: '/creative.ts' }).end();
        return;
      }
      const viewer = Number(/\/v(\d+)\.m3u8$/.exec(url)?.[1]);
      const n = ++mediaRequests;
      // three segments at the live edge, of this viewer's own, moving on every period
      const j = Math.floor(Date.now() / PERIOD_MS);
      const text = `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${[j - 2, j - 1, j].map((k) => `#EXTINF:0.5,\n/v1/segment/${viewer}/${k}.ts\n`).join('')}`;
      const reply = (): void => {
        // sized bodies, chunked ones (written in two parts) and, now and then, a connection closed after the reply
        if (n % 3 === 0) { res.writeHead(200); res.write(text.slice(0, 17)); res.end(text.slice(17)); }
        else res.writeHead(200, { 'content-length': Buffer.byteLength(text), ...(n % 11 === 0 ? { connection: 'close' } : {}) }).end(text);
      };
      if (viewer === SLOW_VIEWER) setTimeout(reply, 300); else reply();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sends every reload once, fetches each new segment once, and counts a slow reply from its schedule', async () => {
    const binary = await buildNativeLoad();
    expect(binary).toBeDefined();
    const viewers = 40;
    const paths = Array.from({ length: viewers }, (_, i) => `/live/v${i}.m3u8`);
    const result = await runNativeLoad(binary!, base, paths, { seconds: 2, rampSeconds: 1, periodMs: PERIOD_MS, connections: 8, segments: true }) as {
      sent: number; answered: number; errors: number; statuses: Record<string, number>; withAds: number; maxMs: number;
      ramp: { sent: number }; segments: { sent: number; errors: number }; bySecond: Array<{ s: number }>; loadGenerator: string;
    };
    expect(result.loadGenerator).toBe('native');
    // 2 s measured at one reload per 500 ms: 4 reloads a viewer
    expect(result.sent).toBe(viewers * 4);
    expect(result.answered).toBe(result.sent);
    expect(result.errors).toBe(0);
    expect(result.statuses).toEqual({ 200: result.sent });
    expect(result.withAds).toBe(result.sent);
    // the server saw each scheduled reload once, the ramp's included
    expect(mediaRequests).toBe(result.sent + result.ramp.sent);
    // each segment URI listed fetched once by its viewer, none twice
    expect([...segmentsAsked.values()].every((n) => n === 1)).toBe(true);
    expect(result.segments.errors).toBe(0);
    expect(result.segments.sent).toBeGreaterThan(0);
    expect(result.segments.sent).toBeLessThanOrEqual(segmentsAsked.size);
    // the slow viewer's replies take 300 ms after their scheduled send
    expect(result.maxMs).toBeGreaterThanOrEqual(300);
    expect(result.bySecond.map((x) => x.s)).toEqual([0, 1]);
  });
});
