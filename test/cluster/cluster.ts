// A cluster on one machine, as DESIGN.md "Processes and scale" describes it: the real `engine` command started once per
// role on the local PostgreSQL (one schema per cluster) and Redis (one key prefix), sharing one DATA_DIR (the shared
// media volume) and one ENGINE_SECRET_KEY, behind a balancer that sends /v1 round-robin to the ssai processes and the
// rest to the api. Every URL the engine hands out is the balancer's (PUBLIC_URL), as behind a real load balancer.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { POSTGRES_URL } from '../helpers/engine.js';
import { startEngineProcess, type EngineProcess } from '../helpers/engine-process.js';
import { deleteRedisPrefix, REDIS_URL, testRedisPrefix } from '../helpers/redis.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every 250 ms until it gives a value; fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

/** A channel's detail as the API answers it. */
export interface ChannelDetail { channelStatus: string; statusReason?: string | null; outputs?: Array<{ url: string }>; [field: string]: unknown }

/** Waits for a channel to reach `status`; `failed` seen on the way throws with the channel's reason. */
export function untilChannel<T extends ChannelDetail>(read: () => Promise<T>, status: string, failed: string, timeoutMs: number): Promise<T> {
  return until(`the channel ${status}`, timeoutMs, async () => {
    const detail = await read();
    if (detail.channelStatus === failed) throw new Error(`the channel is ${failed}: ${detail.statusReason}`);
    return detail.channelStatus === status ? detail : undefined;
  });
}

export const CLUSTER_ADMIN = { email: 'admin@example.test', password: 'cluster-admin-password' };

/**
 * Round-robin over the live ssai processes for /v1, /live (channel outputs) to the packager, everything else to the api;
 * a refused connection tries the next.
 */
export class Balancer {
  readonly server: http.Server;
  url = '';
  private next = 0;
  /** which backend answered each /v1 request, in order */
  readonly answeredBy: string[] = [];

  constructor(private readonly api: () => EngineProcess, private readonly ssai: () => EngineProcess[], private readonly packager: () => EngineProcess | undefined = () => undefined) {
    this.server = http.createServer((req, res) => void this.route(req, res));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body: Buffer[] = [];
    for await (const chunk of req) body.push(chunk as Buffer);
    const url = req.url ?? '';
    const packager = this.packager();
    const candidates = url.startsWith('/v1/') ? this.ssai() : url.startsWith('/live/') && packager ? [packager] : [this.api()];
    for (let attempt = 0; attempt < candidates.length; attempt++) {
      const backend = candidates[(this.next + attempt) % candidates.length]!;
      try {
        await this.forward(backend, req, Buffer.concat(body), res);
        if (candidates.length > 1) {
          this.next = (this.next + attempt + 1) % candidates.length;
          this.answeredBy.push(backend.name);
        }
        return;
      } catch {
        // a dead backend (refused connection): the next one takes the request, as a load balancer's health check would
      }
    }
    res.writeHead(502).end('no backend answered');
  }

  private forward(backend: EngineProcess, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): Promise<void> {
    return new Promise((resolve, reject) => {
      const upstream = http.request(`${backend.url}${req.url ?? '/'}`, { method: req.method, headers: { ...req.headers, host: new URL(this.url).host } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => resolve());
      });
      upstream.on('error', reject);
      upstream.end(body);
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface Cluster {
  balancer: Balancer;
  api: EngineProcess;
  ssai: EngineProcess[];
  workers: EngineProcess[];
  /** the packager process (the new one after restartPackager) */
  readonly packager: EngineProcess;
  /** kills the packager with -9 and starts another on the same DATA_DIR: a packager machine rebooted */
  restartPackager(): Promise<EngineProcess>;
  dataDir: string;
  schema: string;
  redisPrefix: string;
  /** the environment every process got (secrets included, for the log checks) */
  env: Readonly<Record<string, string>>;
  /** a pg client on the cluster's schema */
  query<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Starts api first (it migrates and creates the organization), then the other five processes at once. */
export async function startCluster(options: { ssai?: number; workers?: number; logsToFiles?: boolean; env?: Record<string, string> } = {}): Promise<Cluster> {
  const schema = `cluster_${randomBytes(5).toString('hex')}`;
  const redisPrefix = testRedisPrefix('cluster');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-cluster-'));
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const databaseUrl = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;

  let api: EngineProcess | undefined;
  let ssai: EngineProcess[] = [];
  let packagerProcess: EngineProcess | undefined;
  const balancer = new Balancer(() => api!, () => ssai.filter((p) => p.child.exitCode === null && p.child.signalCode === null), () => packagerProcess);
  await balancer.listen();
  const env = {
    DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: redisPrefix, DATA_DIR: dataDir, PUBLIC_URL: balancer.url,
    ENGINE_SECRET_KEY: randomBytes(32).toString('base64'), ENGINE_ADMIN_EMAIL: CLUSTER_ADMIN.email, ENGINE_ADMIN_PASSWORD: CLUSTER_ADMIN.password,
    // the RTMP ingest front binds on the first RTMP_PUSH start: never the shared 1935 in tests
    LOG_LEVEL: 'info', RTMP_PORT: '0', ...options.env,
  };
  const started: EngineProcess[] = [];
  // Benchmarks send each process's logs to a file of its own (DATA_DIR/logs): a pipe to this process would throttle them.
  const logOptions = (name: string) => (options.logsToFiles ? { logFile: path.join(dataDir, 'logs', `${name}.log`) } : {});
  if (options.logsToFiles) fs.mkdirSync(path.join(dataDir, 'logs'), { recursive: true });
  const role = async (name: string, roles: string) => {
    const p = await startEngineProcess(name, { ...env, ENGINE_ROLES: roles }, logOptions(name));
    started.push(p);
    return p;
  };
  const close = async () => {
    await Promise.all(started.map((p) => p.stop()));
    await balancer.close();
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await admin.query(`drop schema if exists ${schema}_boss cascade`).catch(() => undefined);
    await admin.end();
    await deleteRedisPrefix(redisPrefix);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    api = await role('api', 'api');
    const [ssaiProcesses, workers, [packager]] = await Promise.all([
      Promise.all(Array.from({ length: options.ssai ?? 2 }, (_, i) => role(`ssai-${i + 1}`, 'ssai'))),
      Promise.all(Array.from({ length: options.workers ?? 2 }, (_, i) => role(`worker-${i + 1}`, 'worker'))),
      Promise.all([role('packager', 'packager')]),
    ]);
    ssai = ssaiProcesses;
    packagerProcess = packager;
    const query = async <T extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
      await admin.query(`set search_path to ${schema}`);
      return (await admin.query<T>(text, values)).rows;
    };
    const restartPackager = async () => {
      await packagerProcess?.kill();
      packagerProcess = await role('packager-restarted', 'packager');
      return packagerProcess;
    };
    return { balancer, api, ssai, workers, get packager() { return packagerProcess!; }, restartPackager, dataDir, schema, redisPrefix, env, query, close };
  } catch (error) {
    await close();
    throw error;
  }
}
