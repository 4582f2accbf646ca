// Embedded job queue: every job is a row of `encode_jobs` in the engine's own database (SQLite by default), so a job
// survives a restart: at start, jobs left `running` by a process that died or closed are queued again.
// One process takes jobs (the all-in-one engine); for several workers use the pg-boss queue.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../kernel/store/database.js';
import { fromJson, toJson } from '../kernel/store/database.js';
import type { EncodeProgress } from './ffmpeg-runner.js';
import {
  DEFAULT_CONCURRENCY, JOB_PRIORITY, JobCanceledError, type EncodeQueue, type EnqueueOptions, type JobHandler, type JobInfo,
  type JobKind, type JobState,
} from './queue.js';

export interface EncodeJobTable {
  id: string;
  kind: string;
  payload: string;
  priority: number;
  state: string;
  attempts: number;
  progress: string | null;
  output: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

declare module '../kernel/store/database.js' {
  interface Tables {
    encode_jobs: EncodeJobTable;
  }
}

export interface DatabaseQueueOptions {
  db: Db;
  logger: Logger;
  now?: () => number;
  /** How often idle workers look for jobs another request enqueued (ms); enqueue also wakes them at once. */
  pollMs?: number;
}

function toInfo(row: EncodeJobTable): JobInfo {
  const info: JobInfo = { id: row.id, kind: row.kind as JobKind, state: row.state as JobState, priority: Number(row.priority) };
  if (row.output !== null) info.output = fromJson<unknown>(row.output, null);
  if (row.error !== null) info.error = row.error;
  if (row.progress !== null) info.progress = fromJson<EncodeProgress>(row.progress, { percent: 0, speedX: 0, etaSec: 0, stage: '' });
  return info;
}

export class DatabaseEncodeQueue implements EncodeQueue {
  readonly backend = 'database' as const;
  private readonly db: Db;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly pollMs: number;
  private readonly handlers = new Map<JobKind, { handler: JobHandler; concurrency: number; running: number }>();
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private readonly waiters = new Map<string, Array<(info: JobInfo) => void>>();
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private closed = false;
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;

  constructor(opts: DatabaseQueueOptions) {
    this.db = opts.db;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
    this.pollMs = opts.pollMs ?? 1000;
  }

  async enqueue(kind: JobKind, payload: Record<string, unknown>, opts: EnqueueOptions = {}): Promise<string> {
    const id = randomUUID();
    const now = this.now();
    await this.db.insertInto('encode_jobs').values({
      id, kind, payload: toJson(payload), priority: opts.priority ?? JOB_PRIORITY[kind], state: 'queued', attempts: 0,
      progress: null, output: null, error: null, created_at: now, updated_at: now,
    }).execute();
    this.logger.info({ jobId: id, kind }, 'job queued');
    this.wake();
    return id;
  }

  async get(id: string): Promise<JobInfo | undefined> {
    const row = await this.db.selectFrom('encode_jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toInfo(row) : undefined;
  }

  async waitFor(id: string, timeoutMs = 30 * 60_000): Promise<JobInfo> {
    let waiter: ((info: JobInfo) => void) | undefined;
    const settled = new Promise<JobInfo>((resolve) => {
      waiter = resolve;
      const list = this.waiters.get(id) ?? [];
      list.push(resolve);
      this.waiters.set(id, list);
    });
    let stopped = false;
    // The job may have finished before the waiter was registered, or in another process: poll as well.
    const poll = (async () => {
      while (!stopped) {
        const info = await this.get(id);
        if (!info) throw new Error(`job ${id} does not exist`);
        if (info.state === 'done' || info.state === 'failed') return info;
        await new Promise((r) => setTimeout(r, 500));
        if (this.closed) throw new Error('the queue closed');
      }
      return new Promise<never>(() => undefined); // stopped: the race is already settled
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`job ${id} did not finish within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([settled, poll, timeout]);
    } finally {
      // However the race ended, nothing of this wait is left behind: no polling loop, no registered waiter.
      stopped = true;
      clearTimeout(timer);
      const list = this.waiters.get(id)?.filter((w) => w !== waiter);
      if (list?.length) this.waiters.set(id, list);
      else this.waiters.delete(id);
    }
  }

  handle(kind: JobKind, handler: JobHandler, concurrency = DEFAULT_CONCURRENCY[kind]): void {
    this.handlers.set(kind, { handler, concurrency, running: 0 });
  }

  async start(): Promise<void> {
    if (this.started || this.handlers.size === 0) return;
    this.started = true;
    // Jobs a previous process left running never finished: they run again.
    const requeued = await this.db.updateTable('encode_jobs').set({ state: 'queued', updated_at: this.now() })
      .where('state', '=', 'running').executeTakeFirst();
    const count = Number(requeued.numUpdatedRows);
    if (count > 0) this.logger.info({ jobs: count }, 'jobs interrupted by the last shutdown are queued again');
    this.timer = setInterval(() => this.wake(), this.pollMs);
    this.timer.unref();
    this.wake();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const job of this.running.values()) job.abort.abort();
    await this.pumping?.catch(() => undefined);
    await Promise.allSettled([...this.running.values()].map((j) => j.done));
  }

  private wake(): void {
    if (!this.started || this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump()
      .catch((error: unknown) => this.logger.error({ err: error }, 'job queue poll failed'))
      .finally(() => {
        this.pumping = undefined;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.wake();
        }
      });
  }

  /** Claims the best queued job of every kind that has a free slot, until none is left. */
  private async pump(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      const free = [...this.handlers.entries()].filter(([, h]) => h.running < h.concurrency).map(([k]) => k);
      if (free.length === 0) return;
      const row = await this.db.selectFrom('encode_jobs').selectAll().where('state', '=', 'queued').where('kind', 'in', free)
        .orderBy('priority', 'desc').orderBy('created_at', 'asc').orderBy('id', 'asc').limit(1).executeTakeFirst();
      if (!row) return;
      const claimed = await this.db.updateTable('encode_jobs')
        .set({ state: 'running', attempts: Number(row.attempts) + 1, updated_at: this.now() })
        .where('id', '=', row.id).where('state', '=', 'queued').executeTakeFirst();
      if (Number(claimed.numUpdatedRows) === 0) continue;
      this.run(row);
    }
  }

  private run(row: EncodeJobTable): void {
    const kind = row.kind as JobKind;
    const slot = this.handlers.get(kind);
    if (!slot) return;
    slot.running++;
    const abort = new AbortController();
    const logger = this.logger.child({ jobId: row.id, kind });
    let lastProgressWrite = 0;
    const progress = (p: EncodeProgress): void => {
      const now = Date.now();
      if (now - lastProgressWrite < 1000 && p.percent < 100) return;
      lastProgressWrite = now;
      void this.db.updateTable('encode_jobs').set({ progress: toJson(p) }).where('id', '=', row.id).execute()
        .catch(() => undefined);
    };
    const done = (async () => {
      logger.info({ attempt: Number(row.attempts) + 1 }, 'job started');
      let state: JobState = 'done';
      let output: unknown = null;
      let error: string | null = null;
      try {
        output = await slot.handler(fromJson<Record<string, unknown>>(row.payload, {}),
          { id: row.id, kind, signal: abort.signal, progress, logger });
      } catch (e) {
        if (abort.signal.aborted || e instanceof JobCanceledError) {
          logger.info('job interrupted by shutdown; it runs again at the next start');
          return;
        }
        state = 'failed';
        error = e instanceof Error ? e.message : String(e);
        logger.error({ err: e }, 'job failed');
      }
      await this.db.updateTable('encode_jobs')
        .set({ state, output: output === undefined ? null : toJson(output), error, updated_at: this.now() })
        .where('id', '=', row.id).execute();
      logger.info({ state }, 'job finished');
      const info = await this.get(row.id);
      if (info) for (const resolve of this.waiters.get(row.id) ?? []) resolve(info);
      this.waiters.delete(row.id);
    })().catch((e: unknown) => logger.error({ err: e }, 'job bookkeeping failed')).finally(() => {
      slot.running--;
      this.running.delete(row.id);
      this.wake();
    });
    this.running.set(row.id, { abort, done });
  }
}
