// Private PostgreSQL and Redis instances on free ports, for tests and benchmarks that kill their store (issue 27): the
// machine's own PostgreSQL (5432) and Redis (6379) serve other tests and are never touched.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The newest PostgreSQL server binaries installed (Debian layout), or undefined. */
function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')) && fs.existsSync(path.join(root, v, 'bin', 'initdb')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

function onPath(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const candidate = path.join(dir, binary);
    if (dir && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Why a private Redis cannot be started here, or undefined when it can. */
export function privateRedisMissing(): string | undefined {
  return onPath('redis-server') ? undefined : 'no redis-server on PATH';
}

/** Why private stores cannot be started here (the fault tests skip with this), or undefined when they can. */
export function privateStoresMissing(): string | undefined {
  if (!postgresBinDir()) return 'no initdb/pg_ctl under /usr/lib/postgresql/*/bin';
  const redis = privateRedisMissing();
  if (redis) return redis;
  if (process.getuid?.() !== 0 || !onPath('runuser')) return 'PostgreSQL must run as the postgres user: the tests need root and runuser';
  return undefined;
}

/** A PostgreSQL cluster of its own in a temp dir, run as the postgres user, listening on 127.0.0.1:<port> only. */
export class PrivatePostgres {
  private constructor(readonly dir: string, readonly port: number, private readonly bin: string) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    const bin = postgresBinDir();
    if (!bin) throw new Error('no PostgreSQL binaries');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-private-pg-'));
    const { stdout } = await run('id', ['-u', 'postgres']);
    const uid = Number(stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    fs.chownSync(dir, uid, gid);
    const pgDir = new PrivatePostgres(dir, await freePort(), bin);
    await pgDir.asPostgres('initdb', ['-D', pgDir.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    await pgDir.startServer();
    return pgDir;
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  private asPostgres(tool: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
    return run('runuser', ['-u', 'postgres', '--', path.join(this.bin, tool), ...args], { cwd: this.dir });
  }

  /** pg_ctl start, waiting until it accepts connections. */
  async startServer(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
    await this.asPostgres('pg_ctl', ['-D', this.dataDir, '-l', path.join(this.dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
  }

  /** pg_ctl stop -m fast: what a maintenance restart or a failover looks like to clients (57P01 on every connection). */
  async stopServer(): Promise<void> {
    await this.asPostgres('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
  }

  /** Ends every client connection but ours (pg_terminate_backend), the server staying up. */
  async terminateConnections(): Promise<number> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const result = await client.query(`select pg_terminate_backend(pid) as ended from pg_stat_activity where pid <> pg_backend_pid() and backend_type = 'client backend'`);
      return result.rows.filter((row: { ended: boolean }) => row.ended).length;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async query<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<T>(text, values)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.asPostgres('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A redis-server of its own on a free port, without persistence (as the issue's `--save ''`). */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.startServer();
    return redis;
  }

  async startServer(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.child = child;
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await this.ping()) return;
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      await sleep(100);
    }
    throw new Error('redis-server did not answer');
  }

  private async admin<T>(use: (client: Redis) => Promise<T>): Promise<T> {
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null, connectTimeout: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return await use(client);
    } finally {
      client.disconnect();
    }
  }

  async ping(): Promise<boolean> {
    return this.admin(async (c) => (await c.ping()) === 'PONG').catch(() => false);
  }

  /** CLIENT KILL TYPE normal: every client connection dropped, the server staying up. */
  async killConnections(): Promise<number> {
    return this.admin(async (c) => Number(await c.call('CLIENT', 'KILL', 'TYPE', 'normal')));
  }

  /** SHUTDOWN NOSAVE and wait for the process to exit. */
  async stopServer(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await this.admin((c) => c.call('SHUTDOWN', 'NOSAVE')).catch(() => undefined);
    await exited;
  }

  async keys(pattern: string): Promise<string[]> {
    return this.admin((c) => c.keys(pattern));
  }

  async close(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child!.once('exit', resolve));
      this.child.kill('SIGKILL');
      await exited;
    }
  }
}
