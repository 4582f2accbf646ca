// A cluster (api, ssai, worker and packager roles as separate `engine` processes behind a balancer, as test/cluster/) on PRIVATE
// PostgreSQL and Redis instances, so a test or benchmark can kill and restart its stores (issue 27).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Balancer, CLUSTER_ADMIN } from '../cluster/cluster.js';
import { startEngineProcess, type EngineProcess } from '../helpers/engine-process.js';
import { PrivatePostgres, PrivateRedis } from './private-stores.js';

export interface OutageCluster {
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  balancer: Balancer;
  api: EngineProcess;
  ssai: EngineProcess[];
  workers: EngineProcess[];
  /** the first packager process, when asked for */
  packager: EngineProcess | undefined;
  /** every packager process (the fault campaign runs two: one takes over the other's channels) */
  packagers: EngineProcess[];
  /** every engine process, the ones started later by `startRole` included */
  all: EngineProcess[];
  /** starts one more process of the cluster's environment (a replacement after a kill, say); the balancer sends to it as to its role's others */
  startRole(name: string, roles: string): Promise<EngineProcess>;
  dataDir: string;
  /** an ID token of the master account */
  auth: Record<string, string>;
  close(): Promise<void>;
}

export const alive = (p: EngineProcess): boolean => p.child.exitCode === null && p.child.signalCode === null;

export interface OutageClusterOptions {
  ssai?: number;
  workers?: number;
  /** a process with the packager role (its /live behind the balancer), or how many of them */
  packager?: boolean | number;
  logsToFiles?: boolean;
  /** more environment for every process */
  env?: Record<string, string>;
  /** how long each process may take to start (default 120 s; a loaded machine starting seven at once needs more) */
  startTimeoutMs?: number;
}

/** Starts the private stores, then the api (it migrates), then the ssai, worker and packager processes at once. */
export async function startOutageCluster(options: OutageClusterOptions = {}): Promise<OutageCluster> {
  const [postgres, redis] = await Promise.all([PrivatePostgres.start(), PrivateRedis.start()]);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-outage-'));
  let api: EngineProcess | undefined;
  let ssai: EngineProcess[] = [];
  let packagers: EngineProcess[] = [];
  // /live goes to a packager that lives (a dead one's channels are served by the one that took them over)
  const balancer = new Balancer(() => api!, () => ssai.filter(alive), () => packagers.find(alive));
  await balancer.listen();
  const env = {
    DATABASE_URL: postgres.url, REDIS_URL: redis.url, DATA_DIR: dataDir, PUBLIC_URL: balancer.url,
    ENGINE_SECRET_KEY: randomBytes(32).toString('base64'), ENGINE_ADMIN_EMAIL: CLUSTER_ADMIN.email, ENGINE_ADMIN_PASSWORD: CLUSTER_ADMIN.password,
    LOG_LEVEL: 'info', RTMP_PORT: '0', ...options.env,
  };
  if (options.logsToFiles) fs.mkdirSync(path.join(dataDir, 'logs'), { recursive: true });
  const started: EngineProcess[] = [];
  const role = async (name: string, roles: string) => {
    const logs = options.logsToFiles ? { logFile: path.join(dataDir, 'logs', `${name}.log`) } : {};
    const p = await startEngineProcess(name, { ...env, ENGINE_ROLES: roles }, { ...logs, ...(options.startTimeoutMs ? { timeoutMs: options.startTimeoutMs } : {}) });
    started.push(p);
    return p;
  };
  let relogin: NodeJS.Timeout | undefined;
  const close = async () => {
    clearInterval(relogin);
    await Promise.all(started.map((p) => p.stop()));
    await balancer.close();
    await Promise.all([postgres.close(), redis.close()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    api = await role('api', 'api');
    const packagerCount = typeof options.packager === 'number' ? options.packager : options.packager ? 1 : 0;
    // every start settles before a failure is thrown, so close() stops the processes that did start (none left behind)
    const settle = async (starts: Promise<EngineProcess>[]) => {
      const results = await Promise.allSettled(starts);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      return results.map((r) => (r as PromiseFulfilledResult<EngineProcess>).value);
    };
    const [ssaiProcesses, workers, packagerProcesses] = await settle([
      ...Array.from({ length: options.ssai ?? 2 }, (_, i) => role(`ssai-${i + 1}`, 'ssai')),
      ...Array.from({ length: options.workers ?? 1 }, (_, i) => role(`worker-${i + 1}`, 'worker')),
      ...Array.from({ length: packagerCount }, (_, i) => role(i === 0 ? 'packager' : `packager-${i + 1}`, 'packager')),
    ]).then((all) => {
      const ssaiCount = options.ssai ?? 2;
      const workerCount = options.workers ?? 1;
      return [all.slice(0, ssaiCount), all.slice(ssaiCount, ssaiCount + workerCount), all.slice(ssaiCount + workerCount)] as const;
    });
    ssai = ssaiProcesses;
    packagers = packagerProcesses;
    const idToken = async (): Promise<string> => {
      const login = await fetch(`${balancer.url}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CLUSTER_ADMIN) });
      return ((await login.json()) as { data: { IdToken: string } }).data.IdToken;
    };
    const auth = { Authorization: await idToken() };
    // An ID token lasts an hour: a long run (the soak) signs in again every half hour, as a client refreshes its token;
    // the header object is the same, so every caller spreading it sends the new one.
    relogin = setInterval(() => { void idToken().then((t) => { auth.Authorization = t; }, () => undefined); }, 30 * 60_000);
    relogin.unref();
    const startRole = async (name: string, roles: string) => {
      const p = await role(name, roles);
      if (roles === 'ssai') ssai.push(p);
      if (roles === 'worker') workers.push(p);
      if (roles === 'packager') packagers.push(p);
      return p;
    };
    return { postgres, redis, balancer, api, ssai, workers, packager: packagers[0], packagers, get all() { return [...started]; }, startRole, dataDir, auth, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface Answer {
  status: number;
  text: string;
  headers: Headers;
}

/** One request, bounded: a hang fails the caller instead of passing as a slow answer. */
export async function request(url: string, init: RequestInit = {}, timeoutMs = 15_000): Promise<Answer> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  return { status: response.status, text: await response.text(), headers: response.headers };
}
