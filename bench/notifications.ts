// Notification delivery throughput: N events written by notify() in one transaction, then timed until a local
// webhook receiver has every message, on SQLite and (when it answers) PostgreSQL. Baseline from the same run: the
// same N bodies signed and POSTed by a plain sequential fetch loop to the same receiver (the transport alone).
// Writes bench/results/notifications.{json,md}.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEngine, type RunningEngine } from '../wiring/engine.js';
import { createLogger } from '../kernel/core/logger.js';
import { notify } from '../src/notifications/outbox.js';
import { workflowStatusEvent } from '../src/notifications/events.js';
import { signBody } from '../src/notifications/signing.js';

const root = path.resolve(import.meta.dirname, '..');
const N = Number(process.argv[2] ?? 1000);
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

let received = 0;
let confirmation: string | undefined;
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Type?: string; SubscribeURL?: string };
    if (body.Type === 'SubscriptionConfirmation') confirmation = body.SubscribeURL;
    else received += 1;
    res.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function run(dialect: 'sqlite' | 'postgres'): Promise<{ dialect: string; writeMs: number; deliverMs: number; perSecond: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-notify-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ENGINE_ADMIN_PASSWORD: 'bench-password', LOG_LEVEL: 'silent',
    NOTIFY_HTTP_LOOPBACK: 'true', NOTIFY_POLL_MS: '50', ENGINE_ROLES: 'api',
    ...(dialect === 'postgres' ? { DATABASE_URL: POSTGRES_URL } : {}),
  };
  const engine: RunningEngine = await startEngine({ env, logger: createLogger('silent'), ...(dialect === 'postgres' ? { databaseSchema: schema } : {}) });
  try {
    const login = await fetch(`${engine.url}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@localhost', password: 'bench-password' }) });
    const token = ((await login.json()) as { data: { IdToken: string } }).data.IdToken;
    confirmation = undefined;
    await fetch(`${engine.url}/organizations/${engine.defaultOrganizationId}/notification-subscriptions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: token }, body: JSON.stringify({ endpoint: hookUrl, type: 'https' }),
    });
    await until(() => confirmation !== undefined, 'confirmation');
    await fetch(confirmation!);
    received = 0;
    const started = performance.now();
    await engine.ctx.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < N; i++) {
        await notify(trx, workflowStatusEvent({ organizationId: engine.defaultOrganizationId, workflowId: `wf-${i}`, name: `Bench ${i}`, status: 'RUNNING', reason: null, at: Date.now() }));
      }
    });
    const written = performance.now();
    await until(() => received >= N, 'deliveries');
    const done = performance.now();
    return { dialect, writeMs: Math.round(written - started), deliverMs: Math.round(done - written), perSecond: Math.round(N / ((done - written) / 1000)) };
  } finally {
    await engine.close();
    if (dialect === 'postgres') {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.query(`DROP SCHEMA IF EXISTS ${schema}_boss CASCADE`);
      await client.end();
    }
  }
}

async function baseline(): Promise<{ deliverMs: number; perSecond: number }> {
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  received = 0;
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    const body = JSON.stringify({ Type: 'Notification', MessageId: String(i), Event: 'workflow.status', Data: { workflowId: `wf-${i}`, status: 'RUNNING' } });
    const response = await fetch(hookUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-engine-signature': signBody(secret, body) }, body });
    await response.body?.cancel();
  }
  await until(() => received >= N, 'baseline');
  const ms = performance.now() - started;
  return { deliverMs: Math.round(ms), perSecond: Math.round(N / (ms / 1000)) };
}

const rows = [await run('sqlite')];
if (await postgresAnswers()) rows.push(await run('postgres'));
const plain = await baseline();
receiver.close();

const result = {
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, load: os.loadavg().map((l) => Math.round(l * 100) / 100) },
  method: `${N} workflow.status events written by notify() in one transaction; time until a local node:http receiver has all of them (one subscription, sent in order); baseline: the same number of signed bodies POSTed by a sequential fetch loop`,
  messages: N,
  engine: rows,
  baseline: plain,
};
fs.writeFileSync(path.join(root, 'bench/results/notifications.json'), `${JSON.stringify(result, null, 2)}\n`);
fs.writeFileSync(
  path.join(root, 'bench/results/notifications.md'),
  `# Notification delivery\n\nMachine: ${result.machine.cpus} × ${result.machine.model}, Node ${result.machine.node}, load ${result.machine.load.join(' ')}\n\nMethod: ${result.method}\n\n` +
    `| path | write ${N} events (ms) | deliver all (ms) | messages/s |\n|---|---|---|---|\n` +
    rows.map((r) => `| outbox on ${r.dialect} | ${r.writeMs} | ${r.deliverMs} | ${r.perSecond} |`).join('\n') +
    `\n| baseline: plain fetch loop | – | ${plain.deliverMs} | ${plain.perSecond} |\n`,
);
process.stdout.write(`${JSON.stringify(result)}\n`);
