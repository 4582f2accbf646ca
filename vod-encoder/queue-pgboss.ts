// Shared job queue on PostgreSQL with pg-boss (DATABASE_URL=postgres://…): any number of worker processes take jobs
// from it, a job a worker dropped (shutdown: retried at once; crash: after its expiry) runs again on another.
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { EncodeProgress } from './ffmpeg-runner.js';
import type { JobLeases } from './job-leases.js';
import {
  DEFAULT_CONCURRENCY, JOB_KINDS, JOB_PRIORITY, JobCanceledError, JobLeaseLostError, type EncodeQueue, type EnqueueOptions, type JobHandler,
  type JobInfo, type JobKind, type JobState,
} from './queue.js';

export interface PgBossQueueOptions {
  connectionString: string;
  /** PostgreSQL schema of pg-boss's tables; tests use a fresh one. */
  schema?: string;
  logger: Logger;
  /** How long a job may run before pg-boss considers its worker dead and retries it. */
  expireInMinutes?: number;
  /** Leases that hand a killed worker's job to another within seconds (the store of the engine). */
  leases?: (onLost: (queue: string, jobId: string) => Promise<void>) => JobLeases;
}

const queueName = (kind: JobKind): string => `vod-${kind}`;

/**
 * pg-boss 10 ends each job of `work()` with complete() or fail() and awaits neither (its manager.js onFetch): with the
 * database away at that moment their rejection went unhandled (seen in test/faults/stores-under-load). A handler
 * attached to each call's promise makes it handled; a caller that awaits still gets the rejection. Patched once, on
 * pg-boss's Manager, since the instance is private to PgBoss.
 */
let jobEndLogger: Logger | undefined;
function handleUnawaitedJobEnds(logger: Logger): void {
  jobEndLogger = logger;
  const manager = createRequire(import.meta.url)('pg-boss/src/manager.js') as { prototype: Record<string, unknown> };
  if (manager.prototype.engineHandlesJobEnds) return;
  manager.prototype.engineHandlesJobEnds = true;
  for (const name of ['complete', 'fail'] as const) {
    const original = manager.prototype[name] as (...args: unknown[]) => Promise<unknown>;
    const jobEnd = function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const ended = original.apply(this, args);
      ended.catch((error: unknown) => jobEndLogger?.warn({ err: error, call: name }, 'pg-boss could not record the end of a job'));
      return ended;
    };
    // (PgBoss makes its own methods from the manager's by function name: the wrapper keeps the original's)
    Object.defineProperty(jobEnd, 'name', { value: name });
    manager.prototype[name] = jobEnd;
  }
}


function mapState(state: PgBoss.JobWithMetadata['state']): JobState {
  switch (state) {
    case 'completed': return 'done';
    case 'failed': case 'cancelled': return 'failed';
    case 'active': return 'running';
    default: return 'queued';
  }
}

export class PgBossEncodeQueue implements EncodeQueue {
  readonly backend = 'pg-boss' as const;
  private boss: PgBoss;
  private readonly logger: Logger;
  private readonly handlers = new Map<JobKind, { handler: JobHandler; concurrency: number }>();
  private readonly running = new Map<string, AbortController>();
  /** Progress of the jobs this process runs (pg-boss has no progress column; the VOD record carries it too). */
  private readonly progress = new Map<string, EncodeProgress>();
  private readonly kinds = new Map<string, JobKind>();
  private booted: Promise<void> | undefined;
  private closed = false;
  private readonly leases: JobLeases | undefined;

  constructor(private readonly opts: PgBossQueueOptions) {
    this.logger = opts.logger;
    handleUnawaitedJobEnds(opts.logger);
    this.boss = this.newBoss();
    // A failed job with retries left goes back to the queue (retryDelay 1 s) for any worker.
    this.leases = opts.leases?.(async (queue, jobId) => {
      await this.boss.fail(queue, jobId, { message: 'the worker running the job stopped renewing its lease' });
    });
  }

  private newBoss(): PgBoss {
    // (pg-boss hands its options to pg.Pool, whose connect timeout its types leave out)
    const options: PgBoss.ConstructorOptions & { connectionTimeoutMillis: number } = {
      connectionString: this.opts.connectionString,
      schema: this.opts.schema ?? 'pgboss',
      max: 4,
      // A PostgreSQL outage fails pg-boss's queries within seconds instead of holding its loops (issue 27).
      connectionTimeoutMillis: 3_000,
      // Retries exist for dropped jobs only: handlers return expected failures as data instead of throwing.
      retryLimit: 3,
      retryDelay: 1,
      expireInMinutes: this.opts.expireInMinutes ?? 120,
    };
    const boss = new PgBoss(options);
    // Its pool's lost connections and its loops' failed queries come here: logged, and pg-boss polls on (issue 27).
    boss.on('error', (error) => this.logger.warn({ err: error }, 'pg-boss error'));
    return boss;
  }

  /** Starts pg-boss (creating its schema) and the queues; shared by producers and workers. */
  private boot(): Promise<void> {
    this.booted ??= this.bootOnce().catch(async (error: unknown) => {
      // A pg-boss whose start failed (the database away) never starts again: the next call boots a fresh one.
      const failed = this.boss;
      this.boss = this.newBoss();
      this.booted = undefined;
      await failed.stop({ graceful: false, wait: false }).catch(() => undefined);
      throw error;
    });
    return this.booted;
  }

  private async bootOnce(): Promise<void> {
    // Processes starting together (two workers, an ssai) each install pg-boss's schema and create the queues: DDL
    // that deadlocks in PostgreSQL when run at once, and a failed pg-boss start cannot be retried. One at a time,
    // under an advisory lock named after the schema (issue 20: the cluster suite started two workers at once).
    const lock = new pg.Client({ connectionString: this.opts.connectionString, connectionTimeoutMillis: 3_000 });
    lock.on('error', (error) => this.logger.warn({ err: error }, 'the pg-boss boot lock connection was lost'));
    await lock.connect();
    const key = `engine pg-boss boot ${this.opts.schema ?? 'pgboss'}`;
    try {
      await lock.query('select pg_advisory_lock(hashtext($1))', [key]);
      await this.boss.start();
      for (const kind of JOB_KINDS) {
        const name = queueName(kind);
        if (!(await this.boss.getQueue(name))) await this.boss.createQueue(name);
      }
    } finally {
      await lock.query('select pg_advisory_unlock(hashtext($1))', [key]).catch(() => undefined);
      await lock.end().catch(() => undefined);
    }
  }

  async enqueue(kind: JobKind, payload: Record<string, unknown>, opts: EnqueueOptions = {}): Promise<string> {
    await this.boot();
    const id = await this.boss.send(queueName(kind), payload, { priority: opts.priority ?? JOB_PRIORITY[kind] });
    if (!id) throw new Error(`pg-boss refused the ${kind} job`);
    this.kinds.set(id, kind);
    this.logger.info({ jobId: id, kind }, 'job queued');
    return id;
  }

  async get(id: string): Promise<JobInfo | undefined> {
    await this.boot();
    const known = this.kinds.get(id);
    for (const kind of known ? [known] : JOB_KINDS) {
      const job = await this.boss.getJobById<Record<string, unknown>>(queueName(kind), id, { includeArchive: true });
      if (!job) continue;
      const info: JobInfo = { id, kind, state: mapState(job.state), priority: job.priority };
      const output = job.output as { result?: unknown; message?: string } | null;
      if (info.state === 'done') info.output = output?.result ?? null;
      if (info.state === 'failed') info.error = output?.message ?? 'the job failed';
      const progress = this.progress.get(id);
      if (progress) info.progress = progress;
      // Only a pending job's kind is worth remembering: the map would otherwise grow with every job ever sent.
      if (info.state === 'done' || info.state === 'failed') this.kinds.delete(id);
      return info;
    }
    return undefined;
  }

  async waitFor(id: string, timeoutMs = 30 * 60_000): Promise<JobInfo> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const info = await this.get(id);
      if (!info) throw new Error(`job ${id} does not exist`);
      if (info.state === 'done' || info.state === 'failed') return info;
      if (Date.now() > deadline) throw new Error(`job ${id} did not finish within ${timeoutMs} ms`);
      if (this.closed) throw new Error('the queue closed');
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  handle(kind: JobKind, handler: JobHandler, concurrency = DEFAULT_CONCURRENCY[kind]): void {
    this.handlers.set(kind, { handler, concurrency });
  }

  async start(): Promise<void> {
    await this.boot();
    for (const [kind, { handler, concurrency }] of this.handlers) {
      // pg-boss 10 runs one job at a time per work() call: one call per slot.
      for (let i = 0; i < concurrency; i++) {
        await this.boss.work<Record<string, unknown>>(queueName(kind), { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
          if (!job) return { result: null };
          const abort = new AbortController();
          this.running.set(job.id, abort);
          const logger = this.logger.child({ jobId: job.id, kind });
          logger.info('job started');
          // Revoked: another worker leased the job again while this one was too slow to renew (stopped, starved).
          let lost = false;
          const leases = this.leases;
          await leases?.holdOnceBack(job.id, queueName(kind), () => { lost = true; abort.abort(); }, () => this.closed);
          const owned = leases ? async () => !lost && await leases.holds(job.id) : undefined;
          try {
            const result = await handler(job.data, {
              id: job.id, kind, signal: abort.signal, logger,
              progress: (p) => { this.progress.set(job.id, p); },
              ...(owned ? { owned } : {}),
            });
            if (lost) throw new JobLeaseLostError();
            logger.info('job finished');
            return { result: result ?? null };
          } catch (e) {
            if (lost || e instanceof JobLeaseLostError) return this.leftToAnother(queueName(kind), job.id, logger);
            if (abort.signal.aborted) throw new JobCanceledError();
            logger.error({ err: e }, 'job failed');
            throw e;
          } finally {
            await leases?.release(job.id).catch((e: unknown) => logger.warn({ err: e }, 'job lease release failed'));
            this.running.delete(job.id);
            this.progress.delete(job.id);
          }
        });
      }
    }
    this.leases?.start();
  }

  /**
   * A run whose lease went to another worker: pg-boss 10 completes or fails a job by its id alone, and the id is now
   * the other run's (a retry keeps it). Either outcome written now would end that run's job under it (a failure even
   * retries it on a third worker), so this one waits until the job has an outcome of its own, then returns: pg-boss's
   * completion of a job no longer active changes nothing. The slot stays taken meanwhile (one encode's length at most).
   */
  private async leftToAnother(queue: string, jobId: string, logger: Logger): Promise<{ result: null }> {
    logger.warn('the job runs on the worker that leased it again: this run stopped without an outcome, waiting for that one');
    while (!this.closed) {
      const job = await this.boss.getJobById(queue, jobId, { includeArchive: true }).catch(() => undefined);
      if (job === null || (job && (job.state === 'completed' || job.state === 'failed' || job.state === 'cancelled'))) break;
      await new Promise((r) => setTimeout(r, 2_000));
    }
    return { result: null };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.leases?.stop();
    if (!this.booted) return;
    await this.booted.catch(() => undefined);
    for (const abort of this.running.values()) abort.abort();
    await this.boss.stop({ graceful: true, wait: true, timeout: 15_000 });
  }
}
