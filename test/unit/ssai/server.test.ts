// The proxy's request handler always answers: a reply node:http refuses to write becomes a 500, never an unhandled
// rejection with the request left open.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, type AvailRecord, type SessionRecord } from '../../../ssai/decide/avail-record.js';
import type { AdPlanner } from '../../../ssai/decide/ad-planner.js';
import type { BeaconSender } from '../../../ssai/serve/beacons.js';
import { createSsaiMetrics } from '../../../ssai/metrics.js';
import type { OriginFetcher } from '../../../ssai/serve/origin-fetcher.js';
import { SsaiServer } from '../../../ssai/serve/server.js';
import { MemorySessionStore } from '../../../ssai/store/session-store.js';

const NO_TRACKING = { impression: [], start: [], firstQuartile: [], midpoint: [], thirdQuartile: [], complete: [], error: [] };

describe('ssai server: every request is answered', () => {
  let server: http.Server;
  let base = '';
  const store = new MemorySessionStore();

  beforeAll(async () => {
    const session: SessionRecord = {
      id: 's1', guid: 'g1', origin: 'http://origin.test/master.m3u8', playerParams: {}, createdAt: 0, rungs: [],
      variants: [{ n: 0, kind: 'video', uri: 'http://origin.test/v.m3u8', bandwidth: 1_000_000 }],
    };
    const record: AvailRecord = {
      id: 'a1', index: 0, startSegmentIndex: 0, endSegmentIndex: 1, duration: 6, slotDuration: 6, skipped: [],
      ads: [{ adId: 'ad1', creativeId: 'c1', duration: 6, creativeKey: 'k1', tracking: NO_TRACKING }],
    };
    await store.set(keys.session('s1'), session, 60_000_000);
    await store.push(keys.availList('s1'), 'a1', 60_000_000);
    await store.set(keys.avail('s1', 'a1'), record, 60_000_000);
    // A segment URI node:http refuses as a Location header (not Latin-1).
    const planner = { plan: async () => ({ key: 'k1', duration: 6, video: [{ bandwidth: 1_000_000, segments: [{ uri: 'http://media.test/\u4e2d.m4s', duration: 6 }] }] }) };
    const ssai = new SsaiServer({
      lookup: { get: async () => undefined }, origin: {} as OriginFetcher, store, planner: planner as unknown as AdPlanner,
      beacons: { fire: () => undefined } as unknown as BeaconSender, metrics: createSsaiMetrics(new Registry()),
      logger: pino({ level: 'silent' }), now: () => 0, sessionTtlMs: 60_000_000,
    });
    const handle = ssai.handler();
    server = http.createServer((req, res) => { if (!handle(req, res)) res.writeHead(404).end(); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('answers 500 when the redirect URI is not a valid header value', async () => {
    const res = await fetch(`${base}/v1/segment/g1/s1/a1/0/0/0.m4s`, { redirect: 'manual', signal: AbortSignal.timeout(3000) });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { code: string }).code).toBe('INTERNAL');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});
