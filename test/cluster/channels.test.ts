// Channels in a cluster: the api process (no packager role) hands the channel to the packager process through the
// command table; the packager runs it, records its events, and serves its output on /live behind the balancer.
import path from 'node:path';
import HLS from 'hls-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMedia } from '../../fixtures/generate-media.js';
import { postgresAvailable } from '../helpers/engine.js';
import { redisAvailable } from '../helpers/redis.js';
import { decodeLive, tinyBlueprint } from '../e2e/live/live-helpers.js';
import { CLUSTER_ADMIN, startCluster, until, type Cluster } from './cluster.js';

const ready = (await postgresAvailable()) && (await redisAvailable());
if (!ready) process.stderr.write('test/cluster: skipped: the cluster suite needs the local PostgreSQL and Redis (see the messages above)\n');


describe.skipIf(!ready)('a channel in a cluster: api and packager in separate processes', () => {
  let cluster: Cluster;
  let auth: Record<string, string>;
  const api = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${cluster.balancer.url}${url}`, { method, headers: { 'content-type': 'application/json', ...auth }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const settledStatus = (id: string, wanted: string[], timeoutMs: number) =>
    until(`channel ${id} to reach ${wanted.join(' or ')}`, timeoutMs, async () => {
      const detail = (await api('GET', `/channels/${id}`)).body;
      return wanted.includes(detail.channelStatus) ? detail : undefined;
    });

  beforeAll(async () => {
    cluster = await startCluster({ ssai: 0, workers: 0 });
    // the shared DATA_DIR is the media volume: the MP4 input reads its clip there
    await generateMedia('clip', path.join(cluster.dataDir, 'test-media/sample.mp4'), { seconds: 4, size: '320x180' });
    const login = await fetch(`${cluster.balancer.url}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CLUSTER_ADMIN) });
    auth = { Authorization: ((await login.json()) as { data: { IdToken: string } }).data.IdToken };
  }, 120_000);
  afterAll(async () => cluster?.close());

  it('starts an mp4-loop-test channel on the packager, plays its output through the balancer, records its metrics, survives a packager restart, stops to DONE', async () => {
    const created = await api('POST', '/workflows', { name: 'Cluster channel', blueprint: tinyBlueprint('mp4-loop-test') });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    expect((await api('POST', '/channels', { workflows: [id] })).status).toBe(200);
    const running = await settledStatus(id, ['RUNNING', 'START_FAILED'], 60_000);
    expect(running, JSON.stringify(running)).toMatchObject({ channelStatus: 'RUNNING' });

    // run by the packager process, not the api: its command log and its ownership row say so
    expect(cluster.packager.logs.some((line) => line.includes('"channel command done"') && line.includes(id) && line.includes('"command":"start"'))).toBe(true);
    const [owner] = await cluster.query<{ packager_id: string }>('select packager_id from channel_owners where workflow_id = $1', [id]);
    expect(owner?.packager_id).toContain(`-${cluster.packager.child.pid}-`);

    const output = running.outputs[0];
    expect(output).toMatchObject({ type: 'HLS', url: `${cluster.balancer.url}/live/${id}/index.m3u8` });
    const multivariant = HLS.parse(await (await fetch(output.url)).text());
    expect(multivariant.isMasterPlaylist).toBe(true);
    const decoded = await decodeLive(output.url, 3);
    expect(decoded.errors).toBe('');
    expect(decoded.decodedSec).toBeGreaterThanOrEqual(2.5);

    // the packager records its runtime's events itself: no control plane runs beside it
    await until('a metric sample of the channel', 20_000, async () => {
      const rows = await cluster.query<{ n: string }>('select count(*) as n from channel_metrics where workflow_id = $1', [id]);
      return Number(rows[0]?.n) > 0 ? true : undefined;
    });

    // a packager killed with -9 and started again resumes the channel and takes its later commands
    const restarted = await cluster.restartPackager();
    await until('the restarted packager to own the channel', 60_000, async () => {
      const [row] = await cluster.query<{ packager_id: string }>('select packager_id from channel_owners where workflow_id = $1', [id]);
      return row?.packager_id.includes(`-${restarted.child.pid}-`) ? true : undefined;
    });
    const resumed = await until('the resumed output', 60_000, async () => {
      const answer = await fetch(output.url);
      return answer.status === 200 ? answer.text() : undefined;
    });
    expect(HLS.parse(resumed).isMasterPlaylist).toBe(true);

    expect((await api('DELETE', '/channels', { workflows: [id] })).status).toBe(200);
    const done = await settledStatus(id, ['DONE', 'STOP_FAILED'], 30_000);
    expect(done, JSON.stringify(done)).toMatchObject({ channelStatus: 'DONE', stoppedDateTime: expect.any(String) });
    expect(await cluster.query('select * from channel_owners where workflow_id = $1', [id])).toEqual([]);
    expect((await fetch(output.url)).status).toBe(404);
  }, 240_000);
});
