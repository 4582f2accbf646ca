// BeaconSender: close cancels scheduled retries, a silent or trickling tracker is cut at the timeout, and the beacon thread sends and reports.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BeaconSender } from '../../../ssai/serve/beacons.js';
import { ThreadedBeaconDelivery } from '../../../ssai/serve/beacon-thread.js';
import { BeaconDelivery } from '../../../ssai/serve/beacon-delivery.js';
import { MemorySessionStore } from '../../../ssai/store/session-store.js';
import { NO_TRACKING, packTracking } from '../../../ssai/decide/packed-tracking.js';
import { loadConfig } from '../../../kernel/core/config.js';

describe('beacon sender close', () => {
  let server: http.Server;
  let url = '';
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => { hits++; res.writeHead(500).end(); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/beacon`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('drops the retries scheduled before close', async () => {
    const beacons = new BeaconSender(new MemorySessionStore(), { retries: 5 });
    beacons.fire('s:a', 0, [url]);
    for (let i = 0; i < 100 && hits === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(hits).toBe(1);
    await new Promise((r) => setTimeout(r, 50)); // the 500 is answered: a retry is scheduled in 200 ms
    await beacons.close();
    const settled = await Promise.race([beacons.idle().then(() => 'idle'), new Promise((r) => setTimeout(() => r('pending'), 1000))]);
    expect(settled).toBe('idle');
    expect(hits).toBe(1);
  });
});

describe('beacon sender timeouts', () => {
  it('gives up on a tracking server that never answers, after its timeout, and many beacons queue in order', async () => {
    const silent = http.createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const results: string[] = [];
    const beacons = new BeaconSender(new MemorySessionStore(), { timeoutMs: 200, retries: 0, concurrency: 2, onResult: (r) => results.push(r) });
    try {
      const started = Date.now();
      for (let i = 0; i < 6; i++) beacons.fire(`s:a`, i * 6 + 1, [`http://127.0.0.1:${(silent.address() as AddressInfo).port}/t${i}`]);
      await beacons.idle();
      expect(results).toEqual(Array(6).fill('failed'));
      // 3 rounds of 2 at 200 ms each (~0.6 s); undici's own headers timeout would take 300 s a round. The bound is loose
      // on purpose: a loaded machine stretches the rounds, never by 500 times.
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      await beacons.close();
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('beacon sender and a trickling tracker', () => {
  it('cuts an answer whose body comes a byte at a time once the beacon timeout is spent, and the queue drains', async () => {
    // headers at once, then a byte every 20 ms for ever: the agent's bodyTimeout (a gap between chunks) never fires
    const timers = new Set<NodeJS.Timeout>();
    const trickle = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('.'), 20);
      timers.add(t);
      res.on('close', () => { clearInterval(t); timers.delete(t); });
    });
    await new Promise<void>((r) => trickle.listen(0, '127.0.0.1', () => r()));
    const results: string[] = [];
    const beacons = new BeaconSender(new MemorySessionStore(), { timeoutMs: 200, retries: 0, concurrency: 2, onResult: (r) => results.push(r) });
    try {
      const started = Date.now();
      for (let i = 0; i < 6; i++) beacons.fire('s:b', i, [`http://127.0.0.1:${(trickle.address() as AddressInfo).port}/t${i}`]);
      await beacons.idle();
      // the tracker answered 200: the beacon was received, only its body was cut (no retry)
      expect(results).toEqual(Array(6).fill('sent'));
      expect(Date.now() - started).toBeLessThan(30_000);
      // every trickle ended: the proxy closed the answers it cut
      for (let i = 0; i < 100 && timers.size > 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(timers.size).toBe(0);
    } finally {
      await beacons.close();
      for (const t of timers) clearInterval(t);
      trickle.closeAllConnections();
      await new Promise((r) => trickle.close(r));
    }
  });
});

describe('beacons on the beacon thread', () => {
  it('sends each URL once from the thread (packed ones unpacked there), retries a 5xx there, and reports how each ended before idle() settles', async () => {
    const hits = new Map<string, number>();
    const tracker = http.createServer((req, res) => {
      const n = (hits.get(req.url!) ?? 0) + 1;
      hits.set(req.url!, n);
      // /flaky fails once (a retry sends it again), /gone always answers 404 (failed, not retried)
      res.writeHead(req.url === '/flaky' && n === 1 ? 503 : req.url === '/gone' ? 404 : 204).end();
    });
    await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
    const counted: Record<string, number> = {};
    const transport = new ThreadedBeaconDelivery({ timeoutMs: 2000, onResult: (result, n) => { counted[result] = (counted[result] ?? 0) + n; } });
    const beacons = new BeaconSender(new MemorySessionStore(), { transport, onResult: (r) => { counted[r] = (counted[r] ?? 0) + 1; } });
    try {
      expect(await beacons.threadHeapUsed()).toBe(0); // no thread before the first beacon
      for (let i = 0; i < 20; i++) beacons.fire('s:c', i, [`${base}/ok${i}`]);
      beacons.fire('s:c', 20, [`${base}/flaky`]);
      beacons.fire('s:c', 21, [`${base}/gone`]);
      beacons.fire('s:c', 0, [`${base}/ok0`]); // the same event again: marked already, never sent
      // an event's URLs still packed in their record: unpacked on the thread, each sent; an event with none sends nothing
      const packed = packTracking([{ ...NO_TRACKING, start: [`${base}/packed-a`, `${base}/packed-b`] }]);
      beacons.fire('s:c', 22, [{ packed, adIndex: 0, event: 'start' }]);
      beacons.fire('s:c', 23, [{ packed, adIndex: 0, event: 'complete' }]);
      await beacons.idle();
      expect(counted).toEqual({ sent: 23, failed: 1, duplicate: 1 });
      expect(hits.get('/flaky')).toBe(2);
      expect([...hits.entries()].filter(([u]) => u.startsWith('/ok') || u.startsWith('/packed')).every(([, n]) => n === 1)).toBe(true);
      expect(hits.size).toBe(24);
      expect(await beacons.threadHeapUsed()).toBeGreaterThan(100_000); // the thread's own heap, asked of it
    } finally {
      await beacons.close();
      tracker.closeAllConnections();
      await new Promise((r) => tracker.close(r));
    }
  });
});

describe('the beacon thread\'s priority', () => {
  it.skipIf(!existsSync('/proc/thread-self'))('runs at the niceness it is given (SSAI_BEACON_NICE), behind the decision threads by default (Linux)', async () => {
    const tracker = http.createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', () => r()));
    // the nice field (19th) of each task of this process's /proc stat
    const niceOfTasks = () => readdirSync('/proc/self/task').map((tid) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
    const mine = niceOfTasks()[0] ?? 0;
    const results: string[] = [];
    const transport = new ThreadedBeaconDelivery({ nice: 6, onResult: (r) => results.push(r) });
    try {
      transport.send([`http://127.0.0.1:${(tracker.address() as AddressInfo).port}/b`]);
      await transport.idle();
      expect(results).toEqual(['sent']);
      expect(niceOfTasks().filter((n) => n === mine + 6)).toHaveLength(1);
      expect(niceOfTasks()[0]).toBe(mine); // the main thread keeps its own
      // the defaults: beacons nicer than the decisions, which have a deadline
      const config = loadConfig({});
      expect(config.ssaiBeaconNice).toBeGreaterThan(config.ssaiDecisionNice);
      expect(loadConfig({ SSAI_BEACON_NICE: '3' }).ssaiBeaconNice).toBe(3);
      expect(() => loadConfig({ SSAI_BEACON_NICE: '20' })).toThrow(/SSAI_BEACON_NICE/);
    } finally {
      await transport.close();
      tracker.closeAllConnections();
      await new Promise((r) => tracker.close(r));
    }
  });
});

describe('beacon delivery and malformed URLs', () => {
  it('fails each malformed URL alone, thousands in a row, and sends the good one after them', async () => {
    const tracker = http.createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', () => r()));
    const results: string[] = [];
    const delivery = new BeaconDelivery({ retries: 0 }, (r) => results.push(r));
    try {
      delivery.send([...Array.from({ length: 20_000 }, () => 'not a url'), `http://127.0.0.1:${(tracker.address() as AddressInfo).port}/ok`]);
      await delivery.idle();
      expect(results.filter((r) => r === 'failed')).toHaveLength(20_000);
      expect(results.filter((r) => r === 'sent')).toHaveLength(1);
    } finally {
      await delivery.close();
      tracker.closeAllConnections();
      await new Promise((r) => tracker.close(r));
    }
  });
});
