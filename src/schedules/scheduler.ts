// Starts and stops scheduled channels. Runs in every api process, acts only in the one holding the
// database lock row (taken and renewed with one conditional UPDATE), so a cluster starts each run once.
import type { EngineContext } from '../../kernel/context.js';
import { newId } from '../../kernel/core/ids.js';
import type { ChannelService } from '../channels/channel.service.js';
import { LOCKED_STATUSES, WORKFLOW_STATUSES } from '../workflows/workflow.schema.js';
import type { Workflow, WorkflowStore } from '../workflows/workflow.store.js';
import { latestDueOccurrence } from './occurrences.js';

export interface SchedulerLockTable {
  name: string;
  holder: string;
  expires_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    scheduler_locks: SchedulerLockTable;
  }
}

const LOCK_NAME = 'live-scheduler';
const LOCK_TTL_MS = 60_000;
export const SCHEDULER_INTERVAL_MS = 10_000;

export class Scheduler {
  readonly holder = newId();
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: EngineContext, private readonly workflows: WorkflowStore, private readonly channels: ChannelService) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), SCHEDULER_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.chain;
    await this.release();
  }

  /** One pass over every schedule at ctx.clock's now; passes never overlap within a process. */
  tick(): Promise<void> {
    const next = this.chain.then(() => this.pass()).catch((error: unknown) => this.ctx.logger.error({ err: error }, 'scheduler pass failed'));
    this.chain = next;
    return next;
  }

  /** Takes or renews the lock: free, expired, or already ours. */
  async acquire(now: number): Promise<boolean> {
    const db = this.ctx.store.db;
    const renewed = await db
      .updateTable('scheduler_locks')
      .set({ holder: this.holder, expires_at: now + LOCK_TTL_MS })
      .where('name', '=', LOCK_NAME)
      .where((eb) => eb.or([eb('holder', '=', this.holder), eb('expires_at', '<', now)]))
      .executeTakeFirst();
    if (Number(renewed.numUpdatedRows) > 0) return true;
    await db
      .insertInto('scheduler_locks')
      .values({ name: LOCK_NAME, holder: this.holder, expires_at: now + LOCK_TTL_MS })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    // the insert did nothing when another process holds the row: reading it back tells who won
    const row = await db.selectFrom('scheduler_locks').select('holder').where('name', '=', LOCK_NAME).executeTakeFirst();
    return row?.holder === this.holder;
  }

  private async release(): Promise<void> {
    await this.ctx.store.db.deleteFrom('scheduler_locks').where('name', '=', LOCK_NAME).where('holder', '=', this.holder).execute().catch(() => undefined);
  }

  private async pass(): Promise<void> {
    const now = this.ctx.clock.nowMs();
    if (!(await this.acquire(now))) return;
    for (const workflow of await this.workflows.withSchedules()) {
      try {
        await this.stopIfDue(workflow, now);
        await this.startIfDue(workflow, now);
      } catch (error) {
        this.ctx.logger.warn({ err: error, workflowId: workflow.id }, 'scheduled start or stop failed');
      }
    }
  }

  private setState(workflow: Workflow, patch: { schedule_handled_at?: number; schedule_stop_at?: number | null; schedule_channel_id?: string | null }): Promise<boolean> {
    return this.workflows.patch(workflow.organizationId, workflow.id, WORKFLOW_STATUSES, patch);
  }

  private async stopIfDue(workflow: Workflow, now: number): Promise<void> {
    const { stopAt, channelId } = workflow.scheduleState;
    if (stopAt === undefined || now < stopAt || !channelId) return;
    const channel = await this.workflows.get(workflow.organizationId, channelId);
    // still starting: the stop waits for the next pass
    if (channel && (channel.status === 'PROVISIONING' || channel.status === 'STARTING')) return;
    if (channel && (channel.status === 'RUNNING' || channel.status === 'STOP_FAILED')) await this.channels.stop(workflow.organizationId, [channelId]);
    await this.setState(workflow, { schedule_stop_at: null, schedule_channel_id: null });
    workflow.scheduleState = {};
  }

  private async startIfDue(workflow: Workflow, now: number): Promise<void> {
    if (!workflow.schedule) return;
    const due = latestDueOccurrence(workflow.schedule, now);
    const handled = workflow.scheduleState.handledAt;
    if (!due || (handled !== undefined && due.triggerAt <= handled)) return;
    if (due.stopAt !== undefined && due.stopAt <= now) {
      await this.setState(workflow, { schedule_handled_at: due.triggerAt });
      this.ctx.logger.info({ workflowId: workflow.id, startAt: new Date(due.startAt).toISOString() }, 'skipped a scheduled run whose stop time passed while the engine was down');
      return;
    }
    // read again: a stop sent earlier in this pass may still be running; the next pass retries then
    const fresh = await this.workflows.get(workflow.organizationId, workflow.id);
    if (!fresh || LOCKED_STATUSES.includes(fresh.status)) return;
    // Marked before starting: a run is attempted at most once even if the start below throws.
    await this.setState(workflow, { schedule_handled_at: due.triggerAt });
    if (fresh.status !== 'READY' && fresh.status !== 'DONE') {
      this.ctx.logger.warn({ workflowId: workflow.id, status: fresh.status }, 'a scheduled run was not started: the workflow is not READY or DONE');
      return;
    }
    const [started] = await this.channels.start(workflow.organizationId, [workflow.id]);
    if (started) await this.setState(workflow, { schedule_stop_at: due.stopAt ?? null, schedule_channel_id: started.workflowId });
  }
}
