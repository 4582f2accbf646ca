// The decision threads (issue 19 point 4): the same answers as the in-process client, on a real worker thread, over
// real HTTP to a real ad server; a lost thread fails its open decisions as an ad server failure and is replaced.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThreadedDecisionClient } from '../../../ssai/decide/decision-threads.js';
import { unpackTracking } from '../../../ssai/decide/packed-tracking.js';
import { VastDecisionClient } from '../../../ssai/decide/vast-decision.js';
import { VECTORS_DIR, vectorPath } from '../../helpers/vectors.js';

const inline = VECTORS_DIR ? readFileSync(`${vectorPath('vast-iab')}/4.0/Inline_Linear_Tag-test.xml`, 'utf8') : '';
let server: Server;
let base = '';
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    // /hold never answers: a decision open while its thread is lost
    if (req.url?.startsWith('/hold')) return;
    res.writeHead(200, { 'content-type': 'application/xml' }).end(inline);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => { server.closeAllConnections(); server.close(); });

const req = (path: string, sessionId = 's1') => ({ adServerUrl: `${base}${path}?sid=[session.id]`, sessionId, availIndex: 0, availDuration: 30 });

describe.skipIf(!VECTORS_DIR)('ThreadedDecisionClient', () => {
  it('answers as the in-process client, the request made from the thread with the template filled', async () => {
    const threaded = new ThreadedDecisionClient({ threads: 2 });
    try {
      threaded.prepare();
      const [a, b] = await Promise.all([threaded.decide(req('/vast', 'viewer-a')), threaded.decide(req('/vast', 'viewer-b'))]);
      const local = await new VastDecisionClient().decide(req('/vast', 'viewer-a'));
      expect(local.ok).toBe(true);
      // the same, and the ads' beacons packed on the thread
      const withoutPack = (r: typeof a) => (r.ok ? { ok: r.ok, ads: r.ads } : r);
      expect(withoutPack(a)).toEqual(local);
      expect(withoutPack(b)).toEqual(local);
      expect(a.ok && unpackTracking(a.packedTracking!)).toEqual(a.ok && a.ads.map((ad) => ad.trackingEvents));
      expect(hits).toEqual(expect.arrayContaining(['/vast?sid=viewer-a', '/vast?sid=viewer-b']));
      // a document in hand (a VMAP break's inline VAST) is read on the thread too
      expect(withoutPack(await threaded.fromText(inline, `${base}/vmap`))).toEqual(local);
      // each thread tells its own heap when asked (ssai_thread_heap_used_bytes): a Node environment's worth at least
      const heaps = await threaded.threadHeapsUsed();
      expect(heaps).toHaveLength(2);
      for (const bytes of heaps) expect(bytes).toBeGreaterThan(1_000_000);
    } finally {
      await threaded.close();
    }
  });

  it.skipIf(!existsSync('/proc/thread-self'))('runs its threads at the niceness it is given, behind the playlists\' thread (Linux)', async () => {
    // the nice field (19th) of each task of this process's /proc stat
    const niceOfTasks = () => readdirSync('/proc/self/task').map((tid) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
    const mine = niceOfTasks()[0];
    const threaded = new ThreadedDecisionClient({ threads: 1, nice: 7 });
    try {
      expect((await threaded.decide(req('/vast', 'viewer-n'))).ok).toBe(true);
      expect(niceOfTasks().filter((n) => n === (mine ?? 0) + 7)).toHaveLength(1);
      expect(niceOfTasks()[0]).toBe(mine); // the main thread keeps its own
    } finally {
      await threaded.close();
    }
  });

  it('fails the open decisions of a lost thread as an ad server failure, then decides on a new thread', async () => {
    const threaded = new ThreadedDecisionClient({ threads: 1 });
    try {
      const open = threaded.decide(req('/hold'));
      // the thread is lost while its request waits for the ad server
      const thread = (threaded as unknown as { threads: Array<{ worker: { terminate(): Promise<number> } } | undefined> }).threads[0];
      await waitFor(() => hits.some((h) => h.startsWith('/hold')));
      await thread?.worker.terminate();
      const failed = await open;
      expect(failed.ok).toBe(false);
      expect(!failed.ok && failed.error.reason).toBe('http');
      expect(!failed.ok && failed.error.message).toMatch(/decision thread ended/);
      const again = await threaded.decide(req('/vast', 'viewer-c'));
      expect(again.ok).toBe(true);
    } finally {
      await threaded.close();
    }
    const after = await threaded.decide(req('/vast'));
    expect(!after.ok && after.error.message).toMatch(/closed/);
  });

  it('ends a thread whose event loop is stuck: its decision times out past the budget and a grace, and the thread is replaced', async () => {
    const threaded = new ThreadedDecisionClient({ threads: 1, entry: new URL('../../helpers/stuck-decision-thread.mjs', import.meta.url), decision: { budgetMs: 100 }, graceMs: 300 });
    try {
      const thread = (threaded as unknown as { threads: Array<object | undefined> }).threads;
      const stuck = await threaded.decide(req('/vast'));
      expect(stuck.ok).toBe(false);
      expect(!stuck.ok && stuck.error.reason).toBe('timeout');
      // silent past the grace with a decision overdue, and spinning: ended (its slot emptied for a new thread)
      await waitFor(() => thread[0] === undefined, 20_000);
    } finally {
      await threaded.close();
    }
  });

  it.skipIf(!existsSync('/proc/thread-self'))('keeps a thread that is silent without spinning (starved, not stuck): its decision times out, the thread answers the next (Linux)', async () => {
    const threaded = new ThreadedDecisionClient({ threads: 1, entry: new URL('../../helpers/starved-decision-thread.mjs', import.meta.url), decision: { budgetMs: 100 }, graceMs: 300 });
    try {
      const thread = (threaded as unknown as { threads: Array<{ worker: { threadId: number } } | undefined> }).threads;
      const starved = await threaded.decide(req('/vast', 'starved'));
      expect(!starved.ok && starved.error.reason).toBe('timeout');
      const id = thread[0]?.worker.threadId;
      expect(id).toBeDefined();
      // its 3 s without a core pass, well past the grace: the same thread answers again (asked until it does)
      let next = await threaded.decide(req('/vast', 'next'));
      for (let tries = 0; !next.ok && tries < 20; tries++) next = await threaded.decide(req('/vast', 'next'));
      expect(next.ok || next.error).toBe(true);
      expect(thread[0]?.worker.threadId).toBe(id);
    } finally {
      await threaded.close();
    }
  });

  it('keeps a thread that is busy but answering: only its decisions past the deadline time out, none is failed by its end', async () => {
    // 20 asks answered one every 150 ms: the last ones outlast 100 ms + a 2 s grace, while the thread is never silent for 2 s
    const threaded = new ThreadedDecisionClient({ threads: 1, entry: new URL('../../helpers/slow-decision-thread.mjs', import.meta.url), decision: { budgetMs: 100 }, graceMs: 2_000 });
    try {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => threaded.decide(req('/vast', `busy-${i}`))));
      const reasons = results.map((r) => (r.ok ? 'ok' : r.error.reason));
      expect(reasons.slice(0, 5), reasons.join()).toEqual(Array(5).fill('ok'));
      expect(reasons, reasons.join()).toContain('timeout');
      expect(reasons.filter((r) => r !== 'ok' && r !== 'timeout'), reasons.join()).toEqual([]);
      // the same thread decides the next one
      const thread = (threaded as unknown as { threads: Array<{ worker: { threadId: number } } | undefined> }).threads;
      const id = thread[0]?.worker.threadId;
      expect(id).toBeDefined();
      expect((await threaded.decide(req('/vast', 'after'))).ok).toBe(true);
      expect(thread[0]?.worker.threadId).toBe(id);
    } finally {
      await threaded.close();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  for (let i = 0; i < timeoutMs / 25 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(condition()).toBe(true);
}
