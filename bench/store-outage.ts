// bench/store-outage (issue 27): what survives a store outage. A cluster (api, two ssai, one worker: separate `engine`
// processes behind a balancer) on PRIVATE PostgreSQL and Redis instances (test/faults/private-stores.ts; the machine's
// own stay untouched) while viewers reload their stitched live playlists every 2 s and an API client lists
// configurations every 500 ms. PostgreSQL is stopped (pg_ctl stop -m fast) for OUTAGE seconds and started again, then
// Redis (SHUTDOWN NOSAVE, then a fresh redis-server on the same port). Printed: the API's answers by status during each
// outage, playlists answered 200 of those asked, their p99, the seconds until the API (PostgreSQL) or new breaks' ads
// (Redis) are back, and the records written before that are missing after (must be 0).
// Usage: npx tsx bench/store-outage.ts [viewers=60] [outageSeconds=20]
import os from 'node:os';
import { writeFile, mkdir } from 'node:fs/promises';
import { OriginServer } from '../fixtures/origin-server.js';
import { VastServer } from '../fixtures/vast-server.js';
import { segmentUris, variantUrls } from '../test/ssai/setup.js';
import { alive, request, startOutageCluster, type OutageCluster } from '../test/faults/outage-cluster.js';
import { privateStoresMissing } from '../test/faults/private-stores.js';

const viewerCount = Number(process.argv[2] ?? 60);
const outageSeconds = Number(process.argv[3] ?? 20);
const RELOAD_MS = 2000;
const API_PROBE_MS = 500;
const WRITES_BEFORE = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type Sample = { at: number; status: number; ms: number; ads: boolean };

/** Every answer of the run, with when it was asked. */
class Recorder {
  readonly playlists: Sample[] = [];
  readonly api: Sample[] = [];
  private stopped = false;

  start(cluster: OutageCluster, viewers: string[]): Promise<void[]> {
    const base = cluster.balancer.url;
    const viewer = async (path: string, offset: number) => {
      await sleep(offset);
      while (!this.stopped) {
        const at = Date.now();
        const answer = await request(`${base}${path}`, {}, 10_000).catch(() => ({ status: 0, text: '' }));
        this.playlists.push({ at, status: answer.status, ms: Date.now() - at, ads: segmentUris(answer.text).some((u) => u.includes('/v1/segment/')) });
        await sleep(Math.max(0, RELOAD_MS - (Date.now() - at)));
      }
    };
    const apiClient = async () => {
      while (!this.stopped) {
        const at = Date.now();
        const answer = await request(`${base}/broker/adinserts`, { headers: cluster.auth }, 10_000).catch(() => ({ status: 0, text: '' }));
        this.api.push({ at, status: answer.status, ms: Date.now() - at, ads: false });
        await sleep(Math.max(0, API_PROBE_MS - (Date.now() - at)));
      }
    };
    return Promise.all([...viewers.map((v, i) => viewer(v, (i * RELOAD_MS) / viewers.length)), apiClient()]);
  }

  stop(): void {
    this.stopped = true;
  }
}

function p99(samples: Sample[]): number {
  const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
}

function byStatus(samples: Sample[]): string {
  const counts = new Map<number, number>();
  for (const s of samples) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([status, n]) => `${status === 0 ? 'no answer' : status}: ${n}`).join(', ');
}

async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return (Date.now() - started) / 1000;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

type Row = { store: string; kill: string; api: string; playlists: string; p99: number; recover: string; lost: number; exited: string };

async function writeRecords(cluster: OutageCluster, vastUrl: string, originUrl: string, label: string): Promise<string[]> {
  const guids: string[] = [];
  for (let i = 0; i < WRITES_BEFORE; i++) {
    const made = await request(`${cluster.balancer.url}/broker/adinserts`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...cluster.auth },
      body: JSON.stringify({ name: `${label} ${i}`, type: 'live', ad_server: `${vastUrl}/vast3`, source_url: `${originUrl}/` }),
    });
    if (made.status !== 200) throw new Error(`write ${i} answered ${made.status}`);
    guids.push((JSON.parse(made.text) as { guid: string }).guid);
  }
  return guids;
}

async function lostRecords(cluster: OutageCluster, guids: string[]): Promise<number> {
  const listed = await request(`${cluster.balancer.url}/broker/adinserts`, { headers: cluster.auth });
  return guids.filter((g) => !listed.text.includes(g)).length;
}

async function main(): Promise<void> {
  const missing = privateStoresMissing();
  if (missing) throw new Error(`bench/store-outage needs private stores: ${missing}`);
  const [origin, vast, cluster] = await Promise.all([
    OriginServer.start({ cueForm: 'cue-out', realTime: true }), VastServer.start(), startOutageCluster({ ssai: 2, workers: 1, logsToFiles: true }),
  ]);
  const recorder = new Recorder();
  let running: Promise<unknown> = Promise.resolve();
  const rows: Row[] = [];
  try {
    const made = await request(`${cluster.balancer.url}/broker/adinserts`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...cluster.auth },
      body: JSON.stringify({ name: 'bench', type: 'live', ad_server: `${vast.url}/vast4`, source_url: `${origin.url}/` }),
    });
    const guid = (JSON.parse(made.text) as { guid: string }).guid;
    const viewers: string[] = [];
    for (let i = 0; i < viewerCount; i++) {
      const master = (await request(`${cluster.balancer.url}/v1/master/${guid}/live/master.m3u8`)).text;
      viewers.push(variantUrls(master).find((u) => !master.includes(`URI="${u}"`))!);
    }
    running = recorder.start(cluster, viewers);
    process.stderr.write('waiting for the first stitched break (the worker prepares the creatives)\n');
    await waitFor('stitched ads', 180_000, async () => recorder.playlists.slice(-viewerCount).some((s) => s.ads));
    await sleep(5000);

    const exitedSoFar = () => cluster.all.filter((p) => !alive(p)).map((p) => p.name).join(', ') || 'none';

    // PostgreSQL: stopped, then started again.
    const pgGuids = await writeRecords(cluster, vast.url, origin.url, 'before the PostgreSQL outage');
    process.stderr.write(`PostgreSQL down for ${outageSeconds} s\n`);
    let from = Date.now();
    await cluster.postgres.stopServer();
    await sleep(outageSeconds * 1000);
    let to = Date.now();
    await cluster.postgres.startServer();
    const pgRecover = await waitFor('the API', 120_000, async () => recorder.api.some((s) => s.at > to && s.status === 200));
    const during = (samples: Sample[]) => samples.filter((s) => s.at >= from && s.at < to);
    rows.push({
      store: 'PostgreSQL', kill: `pg_ctl stop -m fast, ${outageSeconds} s`, api: byStatus(during(recorder.api)),
      playlists: `${during(recorder.playlists).filter((s) => s.status === 200).length} / ${during(recorder.playlists).length}`, p99: p99(during(recorder.playlists)),
      recover: `${pgRecover.toFixed(1)} s (API 200 again)`, lost: await lostRecords(cluster, pgGuids), exited: exitedSoFar(),
    });
    await sleep(5000);

    // Redis: shut down without saving, then a fresh server on the same port.
    const redisGuids = await writeRecords(cluster, vast.url, origin.url, 'before the Redis outage');
    process.stderr.write(`Redis down for ${outageSeconds} s\n`);
    from = Date.now();
    await cluster.redis.stopServer();
    await sleep(outageSeconds * 1000);
    to = Date.now();
    await cluster.redis.startServer();
    // Back when a break first seen after the restart is stitched with ads: sessions decide through Redis again.
    const redisRecover = await waitFor('ads after Redis returned', 120_000, async () => recorder.playlists.some((s) => s.at > to + 2000 && s.ads && s.status === 200))
      .catch(() => Number.NaN);
    rows.push({
      store: 'Redis', kill: `SHUTDOWN NOSAVE, ${outageSeconds} s`, api: byStatus(during(recorder.api)),
      playlists: `${during(recorder.playlists).filter((s) => s.status === 200).length} / ${during(recorder.playlists).length}`, p99: p99(during(recorder.playlists)),
      recover: `${redisRecover.toFixed(1)} s (ads in playlists again)`, lost: await lostRecords(cluster, redisGuids), exited: exitedSoFar(),
    });
    const after = recorder.playlists.filter((s) => s.at > to);
    process.stderr.write(`after Redis returned: playlists ${byStatus(after)}\n`);
  } finally {
    recorder.stop();
    await running.catch(() => undefined);
    await cluster.close();
    await origin.close();
    await vast.close();
  }

  const header = '| store | outage | API answers during the outage | playlists 200 / asked during | playlist p99 during | back after the store returned | records written before, lost | processes exited |';
  const lines = [header, '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.store} | ${r.kill} | ${r.api} | ${r.playlists} | ${r.p99} ms | ${r.recover} | ${r.lost} of ${WRITES_BEFORE} | ${r.exited} |`)];
  const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}`;
  const markdown = `bench/store-outage: ${viewerCount} viewers reloading every ${RELOAD_MS / 1000} s, API probe every ${API_PROBE_MS} ms, ${machine}\n\n${lines.join('\n')}\n`;
  process.stdout.write(markdown);
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/store-outage.md', markdown);
  await writeFile('bench/results/store-outage.json', JSON.stringify({ viewers: viewerCount, outageSeconds, rows }, null, 2));
}

main().then(() => process.exit(0), (error: unknown) => {
  process.stderr.write(`bench/store-outage failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
