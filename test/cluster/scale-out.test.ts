import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, OriginServer, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { VastServer } from '../../fixtures/vast-server.js';
import { generateMedia } from '../../fixtures/generate-media.js';
import { postgresAvailable } from '../helpers/engine.js';
import { redisAvailable } from '../helpers/redis.js';
import { segmentUris, variantUrls } from '../ssai/setup.js';
import { catalogBlueprint } from '../api/live/live-helpers.js';
import { CLUSTER_ADMIN, sleep, startCluster, until, type Cluster } from './cluster.js';

const postgres = await postgresAvailable();
const redis = await redisAvailable();
const ready = postgres && redis;
if (!ready) process.stderr.write('test/cluster: skipped: the cluster suite needs the local PostgreSQL and Redis (see the messages above)\n');

/** Ad segment paths without the session part: what "the same ads" means. */
const adsOf = (text: string) => segmentUris(text).filter((u) => u.includes('/v1/segment/'));

/** DESIGN.md "Processes and scale", proven: api, 2 ssai, 2 workers and a packager on PostgreSQL + Redis. */
describe.skipIf(!ready)('a cluster: one api, two ssai behind a balancer, two workers, one packager', () => {
  let cluster: Cluster;
  let origin: OriginServer;
  let vast: VastServer;
  let auth: Record<string, string>;
  let scheduledWorkflow: string;
  let mediaDir: string;
  const base = () => cluster.balancer.url;
  const api = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${base()}${url}`, { method, headers: { 'content-type': 'application/json', ...auth }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const logLines = (processes: Array<{ logs: string[] }>, ...needles: string[]) =>
    processes.flatMap((p) => p.logs).filter((line) => needles.every((needle) => line.includes(needle)));

  beforeAll(async () => {
    mediaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-media-'));
    [origin, vast, cluster] = await Promise.all([OriginServer.start({ cueForm: 'cue-out' }), VastServer.start(), startCluster()]);
    const login = await fetch(`${base()}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CLUSTER_ADMIN) });
    auth = { Authorization: ((await login.json()) as { data: { IdToken: string } }).data.IdToken };
    // Scheduled now, checked at the end: by then the scheduler has passed over it several times.
    const created = await api('POST', '/workflows', {
      name: 'Scheduled', blueprint: catalogBlueprint('rtmp-push-abr'), schedule: { startDateTime: new Date(Date.now() + 1000).toISOString(), duration: 5 },
    });
    expect(created.status).toBe(200);
    scheduledWorkflow = created.body.id;
  }, 180_000);
  afterAll(async () => {
    await cluster?.close();
    await origin?.close();
    await vast?.close();
    fs.rmSync(mediaDir, { recursive: true, force: true });
  });

  let variant = '';
  let stitched = '';
  let decided = 0;

  it('gives a viewer identical stitched playlists from either proxy, with one ad decision', async () => {
    const created = await api('POST', '/broker/adinserts', { name: 'cluster', type: 'live', ad_server: `${vast.url}/vast4`, source_url: `${origin.url}/` });
    expect(created.status).toBe(200);
    origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    const master = await (await fetch(`${base()}/v1/master/${created.body.guid}/live/master.m3u8`)).text();
    variant = variantUrls(master).find((u) => !master.includes(`URI="${u}"`))!;
    expect(variant).toMatch(/^\/v1\/manifest\//);
    // The first avail goes out without ads while the workers prepare its creatives (the proxy waits 200 ms, then keeps
    // that answer for the whole avail so every reload agrees); the same break one loop later is stitched.
    expect((await fetch(`${base()}${variant}`)).status).toBe(200);
    await until('the workers to prepare both creatives', 120_000, async () =>
      logLines(cluster.workers, '"creative prepared"').length >= 2 ? true : undefined);
    origin.advance(CLIP_SEGMENTS * SEGMENT_SECONDS);
    const decisions = vast.requests.length;
    stitched = await until('the ads in the stitched playlist', 30_000, async () => {
      const text = await (await fetch(`${base()}${variant}`)).text();
      return adsOf(text).length > 0 ? text : undefined;
    });
    // Each proxy reuses an origin playlist for up to one target duration (2 s): the one that did not answer may still
    // hold the window from before the advance for that long, then gives the same text as the other.
    for (const proxy of cluster.ssai) {
      const text = await until(`${proxy.name} to see the advanced window`, 10_000, async () => {
        const got = await (await fetch(`${proxy.url}${variant}`)).text();
        return adsOf(got).length > 0 ? got : undefined;
      });
      expect(text).toBe(stitched);
    }
    expect(new Set(cluster.balancer.answeredBy)).toEqual(new Set(['ssai-1', 'ssai-2']));
    expect(vast.requests.length - decisions).toBe(1);
    decided = vast.requests.length;
  }, 180_000);

  it('runs an encode job once with two workers', async () => {
    const source = await generateMedia('clip', path.join(mediaDir, 'short.mp4'), { seconds: 2, size: '160x90' });
    const guid = (await api('POST', '/broker/vod/meta', { title: 'Short' })).body.data.guid as string;
    const upload = await fetch(`${base()}/broker/vod/upload/${guid}`, { method: 'POST', headers: { ...auth, 'content-type': 'video/mp4' }, body: fs.readFileSync(source) });
    expect(upload.status).toBe(200);
    const info = await until('the encode to finish', 120_000, async () => {
      const read = (await api('GET', `/broker/vod/list/${guid}/info`)).body;
      const data = read.data ?? read;
      return data.status === 'complete' || data.status === 'failed' ? data : undefined;
    });
    expect(info.status).toBe('complete');
    const started = logLines(cluster.workers, '"job started"', '"kind":"encode"');
    expect(started).toHaveLength(1);
    // the status is stored before the worker's log line reaches this process through its stdout: wait for the line
    await until('the worker to log the completion', 30_000, async () => (logLines(cluster.workers, '"VOD encode complete"', guid).length ? true : undefined));
    expect(logLines(cluster.workers, '"VOD encode complete"', guid)).toHaveLength(1);
  }, 150_000);

  it('keeps a viewer\'s session when one ssai process is killed with -9', async () => {
    const victim = cluster.ssai[0]!;
    await victim.kill();
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${base()}${variant}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(stitched);
    }
    expect(vast.requests.length).toBe(decided);
  });

  it('finishes the job of a worker killed with -9 on the other worker', async () => {
    const source = await generateMedia('clip', path.join(mediaDir, 'long.mp4'), { seconds: 30, size: '320x180' });
    const guid = (await api('POST', '/broker/vod/meta', { title: 'Long' })).body.data.guid as string;
    const upload = await fetch(`${base()}/broker/vod/upload/${guid}`, { method: 'POST', headers: { ...auth, 'content-type': 'video/mp4' }, body: fs.readFileSync(source) });
    expect(upload.status).toBe(200);
    // Killed while encoding: its progress is logged, its completion not yet.
    const owner = await until('a worker to be encoding the job', 60_000, async () =>
      cluster.workers.find((w) => logLines([w], 'VOD encode progress', guid).length > 0));
    await owner.kill();
    expect(logLines([owner], '"VOD encode complete"', guid)).toEqual([]);
    const survivor = cluster.workers.find((w) => w !== owner)!;
    const info = await until('the other worker to finish the job', 120_000, async () => {
      const read = (await api('GET', `/broker/vod/list/${guid}/info`)).body;
      const data = read.data ?? read;
      return data.status === 'complete' || data.status === 'failed' ? data : undefined;
    });
    expect(info.status).toBe('complete');
    // the worker logs the end after the record is stored and the killed run's files are removed: waited for, not read
    // at once (a loaded CI run read the log before that line came)
    await until('the other worker to log the end of the encode', 30_000, async () => (logLines([survivor], '"VOD encode complete"', guid).length > 0 ? true : undefined));
    expect(logLines([survivor], '"VOD encode complete"', guid)).toHaveLength(1);
    const given = await (await fetch(`${survivor.url}/metrics`)).text();
    expect(given).toMatch(/vod_jobs_given_back_total\{queue="vod-encode"\} 1/);
  }, 200_000);

  it('starts a scheduled channel once, whatever its outcome', async () => {
    await until('the scheduled start', 30_000, async () => {
      const rows = await cluster.query<{ n: string }>('select count(*) as n from channel_events where workflow_id = $1 and status = $2', [scheduledWorkflow, 'PROVISIONING']);
      return Number(rows[0]?.n) > 0 ? true : undefined;
    });
    // Another scheduler pass (every 10 s) must not start it again.
    await sleep(11_000);
    const events = await cluster.query<{ status: string }>('select status from channel_events where workflow_id = $1 order by at', [scheduledWorkflow]);
    expect(events.filter((e) => e.status === 'PROVISIONING')).toHaveLength(1);
    const workflow = (await api('GET', `/workflows/${scheduledWorkflow}`)).body;
    expect(workflow.status).not.toBe('READY');
  }, 60_000);

  it('writes no password, secret key or token into any process\'s logs', () => {
    const logs = [cluster.api, ...cluster.ssai, ...cluster.workers, cluster.packager].flatMap((p) => p.logs).join('\n');
    expect(logs).toContain('"request"');
    const token = auth.Authorization!.split('.');
    const secrets = { adminPassword: CLUSTER_ADMIN.password, secretKey: cluster.env.ENGINE_SECRET_KEY!, idTokenPayload: token[1]!, idTokenSignature: token[2]! };
    expect(Object.entries(secrets).filter(([, value]) => logs.includes(value)).map(([name]) => name)).toEqual([]);
  });
});
