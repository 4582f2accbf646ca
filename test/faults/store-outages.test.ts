// Issue 27: a store outage ends no process. A cluster (api, two ssai, a worker) on private PostgreSQL and Redis
// instances; each store has its connections killed and is restarted while viewers reload their stitched playlists.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, OriginServer, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { VastServer } from '../../fixtures/vast-server.js';
import { ladderOf } from '../../ssai/decide/creative-cache.js';
import { PgBossEncodeQueue } from '../../vod-encoder/queue-pgboss.js';
import { segmentUris, variantUrls } from '../ssai/setup.js';
import { sleep, until } from '../cluster/cluster.js';
import { alive, request, startOutageCluster, type Answer, type OutageCluster } from './outage-cluster.js';
import { privateStoresMissing } from './private-stores.js';

const missing = privateStoresMissing();
if (missing) process.stderr.write(`test/faults: skipped: ${missing}\n`);

const LOOP_SECONDS = CLIP_SEGMENTS * SEGMENT_SECONDS;
/** the ssai processes reuse an origin playlist for one target duration: past it, a reload sees the moved window */
const ORIGIN_REUSE_MS = SEGMENT_SECONDS * 1000 + 500;
const adsOf = (text: string) => segmentUris(text).filter((u) => u.includes('/v1/segment/'));
const tag = (text: string, name: string) => new RegExp(`^#EXT-X-${name}:(\\d+)`, 'm').exec(text)?.[1];

describe.skipIf(missing !== undefined)('store outages (private PostgreSQL and Redis)', () => {
  let cluster: OutageCluster;
  let origin: OriginServer;
  let vast: VastServer;
  let guid = '';
  let unseenGuid = '';
  /** each viewer's video playlist path (a session of its own) */
  const viewers: string[] = [];
  const api = (method: string, url: string, body?: unknown): Promise<Answer> =>
    request(`${cluster.balancer.url}${url}`, { method, headers: { 'content-type': 'application/json', ...cluster.auth }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  /** every viewer's playlist from every ssai process (a round-robin balancer sends a viewer to each in turn) */
  const everyPlaylist = async (): Promise<Answer[]> => {
    const answers: Answer[] = [];
    for (const viewer of viewers) for (const p of cluster.ssai) answers.push(await request(`${p.url}${viewer}`));
    return answers;
  };
  const everyProcessAlive = () => {
    expect(cluster.all.filter((p) => !alive(p)).map((p) => `${p.name} exited:\n${p.logs.slice(-15).join('\n')}`)).toEqual([]);
    // the process-wide safety net (wiring/cli.ts) caught nothing: every store error was handled where it happened
    expect(cluster.all.flatMap((p) => p.logs).filter((l) => l.includes('was not handled where it happened'))).toEqual([]);
  };
  const metric = async (url: string, name: string): Promise<number> => {
    const text = (await request(`${url}/metrics`)).text;
    return [...text.matchAll(new RegExp(`^${name} (\\d+(?:\\.\\d+)?)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
  };

  beforeAll(async () => {
    [origin, vast, cluster] = await Promise.all([OriginServer.start({ cueForm: 'cue-out' }), VastServer.start(), startOutageCluster({ ssai: 2, workers: 1 })]);
    const made = await api('POST', '/broker/adinserts', { name: 'outages', type: 'live', ad_server: `${vast.url}/vast4`, source_url: `${origin.url}/` });
    expect(made.status).toBe(200);
    guid = JSON.parse(made.text).guid;
    const unseen = await api('POST', '/broker/adinserts', { name: 'never played', type: 'live', ad_server: `${vast.url}/vast4`, source_url: `${origin.url}/` });
    unseenGuid = JSON.parse(unseen.text).guid;
    origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS; // a break in the window
    for (let i = 0; i < 3; i++) {
      const master = (await request(`${cluster.balancer.url}/v1/master/${guid}/live/master.m3u8`)).text;
      viewers.push(variantUrls(master).find((u) => !master.includes(`URI="${u}"`))!);
    }
    // The first break goes out without ads while the worker prepares its creatives; the next one is stitched.
    expect((await everyPlaylist()).map((a) => a.status)).toEqual(viewers.flatMap(() => cluster.ssai.map(() => 200)));
    await until('the worker to prepare both creatives', 120_000, async () =>
      cluster.workers.flatMap((p) => p.logs).filter((l) => l.includes('"creative prepared"')).length >= 2 ? true : undefined);
    origin.advance(LOOP_SECONDS);
    await until('every viewer to have its ads from both proxies', 60_000, async () =>
      (await everyPlaylist()).every((a) => a.status === 200 && adsOf(a.text).length > 0) ? true : undefined);
  }, 300_000);

  afterAll(async () => {
    await cluster?.close();
    await origin?.close();
    await vast?.close();
  });

  it('keeps every playlist answered through Redis connections killed and a Redis restart; breaks play content meanwhile and ads return', async () => {
    await cluster.redis.killConnections();
    for (const answer of await everyPlaylist()) {
      expect(answer.status).toBe(200);
      expect(adsOf(answer.text).length).toBeGreaterThan(0);
    }
    everyProcessAlive();

    // A viewer served so far by one proxy only: the other does not hold its session.
    const lonerMaster = await until('the proxy to store sessions again after its connection was killed', 30_000, async () => {
      const text = (await request(`${cluster.ssai[0]!.url}/v1/master/${guid}/live/master.m3u8`)).text;
      return variantUrls(text).some((u) => u.startsWith('/v1/manifest/')) ? text : undefined;
    });
    const loner = variantUrls(lonerMaster).find((u) => !lonerMaster.includes(`URI="${u}"`))!;
    expect((await request(`${cluster.ssai[0]!.url}${loner}`)).status).toBe(200);

    await cluster.redis.stopServer();
    // The other proxy cannot read that session: it plays the configuration's content (one layout seen here).
    const lonerElsewhere = await request(`${cluster.ssai[1]!.url}${loner}`);
    expect(lonerElsewhere.status).toBe(200);
    expect(segmentUris(lonerElsewhere.text).length).toBeGreaterThan(0);
    expect(adsOf(lonerElsewhere.text)).toEqual([]);
    // Sessions this process holds keep their decided break, ads included.
    for (let round = 0; round < 2; round++) {
      for (const answer of await everyPlaylist()) {
        expect(answer.status).toBe(200);
        expect(adsOf(answer.text).length).toBeGreaterThan(0);
      }
    }
    // A new viewer plays the origin itself: no session anybody could read later.
    const newcomer = await request(`${cluster.ssai[0]!.url}/v1/master/${guid}/live/master.m3u8`);
    expect(newcomer.status).toBe(200);
    expect(variantUrls(newcomer.text).every((u) => u.startsWith(origin.url))).toBe(true);
    // A new break needs a decision every proxy agrees on: without Redis it plays its content, on both proxies alike.
    origin.advance(LOOP_SECONDS);
    await sleep(ORIGIN_REUSE_MS);
    const duringOutage = await everyPlaylist();
    for (const answer of duringOutage) {
      expect(answer.status).toBe(200);
      expect(adsOf(answer.text)).toEqual([]);
    }
    expect(await metric(cluster.ssai[0]!.url, 'ssai_store_unavailable_total\\{operation="decision"\\}')).toBeGreaterThan(0);
    everyProcessAlive();

    await cluster.redis.startServer();
    await until('a proxy to store sessions again', 30_000, async () => {
      const master = (await request(`${cluster.ssai[1]!.url}/v1/master/${guid}/live/master.m3u8`)).text;
      return variantUrls(master).some((u) => u.startsWith('/v1/manifest/')) ? true : undefined;
    });
    await sleep(1500); // the breaks played as content are written back
    // The break played as content stays so after Redis returned: the numbering of each viewer never moves.
    const afterOutage = await everyPlaylist();
    afterOutage.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      expect(adsOf(answer.text)).toEqual([]);
      expect(tag(answer.text, 'MEDIA-SEQUENCE')).toBe(tag(duringOutage[i]!.text, 'MEDIA-SEQUENCE'));
      expect(tag(answer.text, 'DISCONTINUITY-SEQUENCE')).toBe(tag(duringOutage[i]!.text, 'DISCONTINUITY-SEQUENCE'));
    });
    // The next break is filled again.
    origin.advance(LOOP_SECONDS);
    await until('the next break to carry ads for every viewer on both proxies', 60_000, async () =>
      (await everyPlaylist()).every((a) => a.status === 200 && adsOf(a.text).length > 0) ? true : undefined);
    everyProcessAlive();
  }, 180_000);

  it('answers 503 DATABASE_UNAVAILABLE through PostgreSQL connections killed and a restart, serves every playlist, and loses nothing', async () => {
    const before = await api('POST', '/broker/adinserts', { name: 'written before the outage', type: 'live', ad_server: `${vast.url}/vast3`, source_url: `${origin.url}/` });
    expect(before.status).toBe(200);
    const beforeGuid = JSON.parse(before.text).guid as string;

    await cluster.postgres.terminateConnections();
    await until('the api to answer again after its connections were killed', 30_000, async () =>
      (await api('GET', '/broker/adinserts')).status === 200 ? true : undefined);
    for (const answer of await everyPlaylist()) expect(answer.status).toBe(200);
    everyProcessAlive();

    await cluster.postgres.stopServer();
    const apiStatuses: number[] = [];
    const playlistStatuses: number[] = [];
    // Longer than the proxy's configuration freshness (10 s): configurations are then served stale.
    const outageEnd = Date.now() + 12_000;
    while (Date.now() < outageEnd) {
      const list = await api('GET', '/broker/adinserts');
      apiStatuses.push(list.status);
      if (list.status === 503) {
        expect(JSON.parse(list.text).code).toBe('DATABASE_UNAVAILABLE');
        expect(Number(list.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      playlistStatuses.push(...(await everyPlaylist()).map((a) => a.status));
      await sleep(1000);
    }
    expect(apiStatuses.every((s) => s === 503), `API answers during the outage: ${apiStatuses.join(' ')}`).toBe(true);
    expect(playlistStatuses.every((s) => s === 200), `playlist answers during the outage: ${playlistStatuses.join(' ')}`).toBe(true);
    const login = await request(`${cluster.balancer.url}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.test', password: 'cluster-admin-password' }) });
    expect(login.status).toBe(503);
    expect((await request(`${cluster.api.url}/readyz`)).status).toBe(503);
    expect((await request(`${cluster.ssai[0]!.url}/readyz`)).status).toBe(200); // the proxy works on: not drained
    const unseen = await request(`${cluster.ssai[0]!.url}/v1/master/${unseenGuid}/live/master.m3u8`);
    expect(unseen.status).toBe(503);
    expect(JSON.parse(unseen.text).code).toBe('DATABASE_UNAVAILABLE');
    everyProcessAlive();

    await cluster.postgres.startServer();
    await until('the api to be ready again', 60_000, async () => (await request(`${cluster.api.url}/readyz`)).status === 200 ? true : undefined);
    const listed = await until('the api to list configurations again', 30_000, async () => {
      const list = await api('GET', '/broker/adinserts');
      return list.status === 200 ? list.text : undefined;
    });
    expect(listed).toContain(beforeGuid);
    expect((await api('POST', '/broker/adinserts', { name: 'written after', type: 'live', ad_server: `${vast.url}/vast3`, source_url: `${origin.url}/` })).status).toBe(200);
    // The worker's queue polls on: a job queued now runs on the worker that lived through the restart.
    const producer = new PgBossEncodeQueue({ connectionString: cluster.postgres.url, logger: pino({ level: 'silent' }) });
    try {
      const id = await producer.enqueue('creative', { mediaFileUrl: `${vast.url}/media/b.mp4`, ladder: ladderOf([{ width: 640, height: 360, bandwidth: 600_000 }], 2), creativeId: 'after-restart' });
      expect((await producer.waitFor(id, 120_000)).state).toBe('done');
    } finally {
      await producer.close();
    }
    everyProcessAlive();
  }, 240_000);
});
