// Leases of the jobs a worker process runs (issue 20: kill -9 of a worker loses no job). pg-boss 10 notices a dead
// worker only when the job expires, which must be longer than the longest encode; a lease renewed every few seconds
// tells the surviving workers within seconds, and one of them fails the job so pg-boss retries it at once elsewhere.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../kernel/store/database.js';

export interface JobLeaseTable {
  job_id: string;
  queue: string;
  /** the process holding the job */
  holder: string;
  /** epoch ms of the last renewal */
  renewed_at: number;
}

declare module '../kernel/store/database.js' {
  interface Tables {
    job_leases: JobLeaseTable;
  }
}

export interface JobLeaseOptions {
  /** a lease not renewed for this long belongs to a dead worker */
  ttlMs?: number;
  /** how often leases are renewed and the stale ones looked for */
  intervalMs?: number;
  logger: Logger;
  now?: () => number;
  /** gives a dead worker's job back to the queue */
  onLost(queue: string, jobId: string): Promise<void>;
}

export class JobLeases {
  readonly holder = randomUUID();
  private readonly ttlMs: number;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> = Promise.resolve();
  /**
   * The jobs this process runs: only their leases are renewed. A lease whose release failed (the database away when
   * the job ended, issue 27) then goes stale, and the job, whose completion pg-boss could not record either, is given
   * back to the queue within the TTL instead of staying active until it expires (hours).
   */
  private readonly held = new Map<string, () => void>();

  constructor(private readonly db: Db, private readonly opts: JobLeaseOptions) {
    this.ttlMs = opts.ttlMs ?? 15_000;
    this.intervalMs = opts.intervalMs ?? 5_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Takes the lease of a job this process starts. `onRevoked` runs when a renewal finds the lease gone to another
   * (this process was too slow to renew it, not dead: stopped, starved, cut from the database): the job was given back
   * and runs again elsewhere, so this run must stop without writing anything more.
   */
  async hold(jobId: string, queue: string, onRevoked: () => void = () => undefined): Promise<void> {
    const row = { job_id: jobId, queue, holder: this.holder, renewed_at: this.now() };
    await this.db.insertInto('job_leases').values(row).onConflict((oc) => oc.column('job_id').doUpdateSet({ holder: this.holder, renewed_at: row.renewed_at })).execute();
    // Held once the row is written: a renewal that ran while the insert failed (the database away) would find no row
    // and revoke a job that nobody else runs.
    this.held.set(jobId, onRevoked);
  }

  /**
   * hold(), tried again while the database is away (issue 27), until it is taken or `stopped()`: pg-boss may hand a
   * job over just before an outage, and a job active with no lease is given back by nobody before it expires (hours).
   */
  async holdOnceBack(jobId: string, queue: string, onRevoked: () => void, stopped: () => boolean, retryMs = 250): Promise<void> {
    for (let wait = retryMs; ; wait = Math.min(wait * 2, 5_000)) {
      try {
        await this.hold(jobId, queue, onRevoked);
        return;
      } catch (error) {
        if (stopped()) throw error;
        this.opts.logger.warn({ err: error, jobId }, 'job lease could not be taken: trying again');
        await delay(wait);
      }
    }
  }

  async release(jobId: string): Promise<void> {
    this.held.delete(jobId);
    await this.db.deleteFrom('job_leases').where('job_id', '=', jobId).where('holder', '=', this.holder).execute();
  }

  start(): void {
    this.timer ??= setInterval(() => {
      this.pass = this.pass.then(() => this.tick()).catch((error: unknown) => this.opts.logger.warn({ err: error }, 'job lease pass failed'));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Whether this process still holds the lease of `jobId` (checked before a run writes its outcome). */
  async holds(jobId: string): Promise<boolean> {
    if (!this.held.has(jobId)) return false;
    const row = await this.db.selectFrom('job_leases').select('job_id').where('job_id', '=', jobId).where('holder', '=', this.holder).executeTakeFirst();
    return row !== undefined;
  }

  /** Renews this process's leases (a lease found gone is revoked here), then gives back the jobs of leases nobody renewed in time. */
  async tick(): Promise<void> {
    const now = this.now();
    if (this.held.size) {
      const asked = [...this.held.keys()];
      const renewed = await this.db.updateTable('job_leases').set({ renewed_at: now }).where('holder', '=', this.holder).where('job_id', 'in', asked).returning('job_id').execute();
      const kept = new Set(renewed.map((r) => r.job_id));
      for (const jobId of asked) {
        const onRevoked = this.held.get(jobId);
        // (released meanwhile: not revoked)
        if (kept.has(jobId) || !onRevoked) continue;
        this.held.delete(jobId);
        this.opts.logger.warn({ jobId }, 'this worker lost the lease of its job to another (it renewed too late): the job stops here');
        onRevoked();
      }
    }
    const stale = await this.db.selectFrom('job_leases').selectAll().where('renewed_at', '<', now - this.ttlMs).execute();
    for (const lease of stale) {
      // Deleting the exact row claims it: of several workers sweeping at once, one gives the job back.
      const claimed = await this.db.deleteFrom('job_leases')
        .where('job_id', '=', lease.job_id).where('holder', '=', lease.holder).where('renewed_at', '=', lease.renewed_at).executeTakeFirst();
      if (Number(claimed.numDeletedRows) !== 1) continue;
      this.opts.logger.warn({ jobId: lease.job_id, queue: lease.queue, deadHolder: lease.holder }, 'a worker stopped renewing its job: the job goes back to the queue');
      await this.opts.onLost(lease.queue, lease.job_id);
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.pass;
  }
}
