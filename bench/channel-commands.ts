// Channel command round trip (api process → packager process through the command table): N input switches of one
// channel sent by a RemoteChannelRuntime and run by a ChannelCommandWorker on a second store (another pool on
// PostgreSQL, another connection on SQLite), with the default poll intervals. Baseline from the same run: the same
// N calls on the runtime directly (what a single process does). Writes bench/results/channel-commands.{json,md}.
// Run: npx tsx bench/channel-commands.ts [N]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { systemClock } from '../kernel/core/clock.js';
import { createLogger } from '../kernel/core/logger.js';
import { openStore, type Store } from '../kernel/store/database.js';
import { RemoteChannelRuntime } from '../src/channels/remote-channel-runtime.js';
import { ChannelCommandWorker } from '../packager/channel-command-worker.js';
import { redisCommandWakeup } from '../src/channels/channel-command-wakeup.js';
import { channelCommandQueue } from '../src/channels/channel-command.store.js';
import type { ChannelEndpoints, ChannelRuntime } from '../kernel/seams/channel-runtime.js';

const root = path.resolve(import.meta.dirname, '..');
const N = Number(process.argv[2] ?? 40);
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379';
const logger = createLogger('silent');

/** Does nothing: the figure is the transport's. */
const noop: ChannelRuntime = {
  start: async (): Promise<ChannelEndpoints> => ({ inputs: [], outputs: [] }),
  stop: async () => ({}),
  insertAdBreak: async () => undefined,
  switchInput: async () => undefined,
};

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? 0;

async function run(dialect: 'sqlite' | 'postgres', redis = false): Promise<Record<string, number | string>> {
  const schema = `bench_cmd_${randomBytes(4).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-commands-'));
  const open = () => (dialect === 'postgres' ? openStore({ databaseUrl: POSTGRES_URL, dataDir, schema }) : openStore({ dataDir }));
  const api: Store = await open();
  const packager: Store = await open();
  // two wake-ups, as two processes have
  const prefix = `bench:${schema}:`;
  const [senderWakeup, packagerWakeup] = redis ? [redisCommandWakeup(REDIS_URL, prefix, logger), redisCommandWakeup(REDIS_URL, prefix, logger)] : [];
  const worker = new ChannelCommandWorker({ queue: channelCommandQueue(packager.db, dialect), runtime: noop, clock: systemClock, logger, publicUrl: () => 'http://packager', ...(packagerWakeup ? { wakeup: packagerWakeup } : {}) });
  await worker.start();
  const remote = new RemoteChannelRuntime({ db: api.db, clock: systemClock, logger, ...(senderWakeup ? { wakeup: senderWakeup } : {}) });
  await new Promise((resolve) => setTimeout(resolve, 300)); // subscriptions in place
  try {
    await remote.start({ workflowId: 'bench', organizationId: 'org', region: 'local', blueprint: { components: {} }, inputWhitelistCIDRs: [], archive: { enabled: false, defaultArchiveGroup: false }, activeInput: 'a' });
    const remoteMs: number[] = [];
    const directMs: number[] = [];
    for (let i = 0; i < N; i++) {
      let t = performance.now();
      await remote.switchInput('bench', i % 2 ? 'a' : 'b');
      remoteMs.push(performance.now() - t);
      t = performance.now();
      await noop.switchInput('bench', 'a');
      directMs.push(performance.now() - t);
    }
    return {
      dialect: redis ? `${dialect} + Redis wake-up` : dialect, n: N,
      remoteP50Ms: Math.round(percentile(remoteMs, 50)), remoteP95Ms: Math.round(percentile(remoteMs, 95)),
      directP50Ms: Number(percentile(directMs, 50).toFixed(3)), directP95Ms: Number(percentile(directMs, 95).toFixed(3)),
    };
  } finally {
    await worker.close();
    await senderWakeup?.close();
    await packagerWakeup?.close();
    await api.close();
    await packager.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (dialect === 'postgres') {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  }
}

const rows = [await run('sqlite')];
try {
  rows.push(await run('postgres'));
  rows.push(await run('postgres', true));
} catch (error) {
  process.stderr.write(`PostgreSQL skipped: ${error instanceof Error ? error.message : String(error)}\n`);
}
const table = ['| dialect | n | remote p50 ms | remote p95 ms | direct p50 ms | direct p95 ms |', '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.dialect} | ${r.n} | ${r.remoteP50Ms} | ${r.remoteP95Ms} | ${r.directP50Ms} | ${r.directP95Ms} |`)].join('\n');
fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
fs.writeFileSync(path.join(root, 'bench/results/channel-commands.json'), `${JSON.stringify({ at: new Date().toISOString(), cpus: os.cpus().length, load: os.loadavg()[0], rows }, null, 2)}\n`);
fs.writeFileSync(path.join(root, 'bench/results/channel-commands.md'),
  `# Channel command round trip\n\n\`npx tsx bench/channel-commands.ts ${N}\` (sender polls every 200 ms, packager every 250 ms; load ${(os.loadavg()[0] ?? 0).toFixed(1)} on ${os.cpus().length} cores)\n\n${table}\n`);
process.stdout.write(`${table}\n`);
