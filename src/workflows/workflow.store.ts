// Workflows and their one channel (spec 2.2, 2.3); every status change goes through transition() so the
// lock rule and the statistics events (recordChannelEvent) cannot be skipped.
import type { Db, Tx } from '../../kernel/store/database.js';
import { fromJson, toJson } from '../../kernel/store/database.js';
import { recordChannelEvent } from '../statistics/channel-events.js';
import { notify } from '../notifications/outbox.js';
import { archiveReadyEvent, workflowStatusEvent } from '../notifications/events.js';
import type { Blueprint } from '../blueprints/blueprint.schema.js';
import type { ChannelInputEndpoint, ChannelOutput } from '../../kernel/seams/channel-runtime.js';
import type { Schedule, WorkflowStatus } from './workflow.schema.js';

export interface WorkflowTable {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  status: string;
  status_reason: string | null;
  blueprint_id: string | null;
  blueprint: string;
  region: string;
  region_given: number;
  tags: string;
  subscriptions: string;
  input_whitelist_cidrs: string;
  schedule: string | null;
  source_workflow_id: string | null;
  channel_region: string | null;
  start_requested_at: number | null;
  started_at: number | null;
  stop_requested_at: number | null;
  stopped_at: number | null;
  channel_inputs: string | null;
  channel_outputs: string | null;
  active_input: string | null;
  archive_status: string | null;
  archive_url: string | null;
  schedule_handled_at: number | null;
  schedule_stop_at: number | null;
  schedule_channel_id: string | null;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    workflows: WorkflowTable;
  }
}

export interface Workflow {
  id: string;
  organizationId: string;
  name: string;
  description?: string;
  status: WorkflowStatus;
  statusReason?: string;
  blueprintId?: string;
  blueprint: Blueprint;
  /** the region channels run in: the given one, else the default region at creation */
  region: string;
  regionGiven: boolean;
  tags: string[];
  subscriptions: unknown[];
  inputWhitelistCIDRs: string[];
  schedule?: Schedule;
  sourceWorkflowId?: string;
  channel: {
    region?: string;
    startRequestedAt?: number;
    startedAt?: number;
    stopRequestedAt?: number;
    stoppedAt?: number;
    inputs: ChannelInputEndpoint[];
    outputs: ChannelOutput[];
    activeInput?: string;
    archiveStatus?: string;
    archiveUrl?: string;
  };
  scheduleState: { handledAt?: number; stopAt?: number; channelId?: string };
  createdAt: number;
  updatedAt: number;
}

const opt = <T>(value: T | null): T | undefined => (value === null ? undefined : value);
const optNum = (value: number | null): number | undefined => (value === null ? undefined : Number(value));

export function toWorkflow(row: WorkflowTable): Workflow {
  const description = opt(row.description);
  const statusReason = opt(row.status_reason);
  const blueprintId = opt(row.blueprint_id);
  const schedule = row.schedule ? fromJson<Schedule>(row.schedule, undefined as unknown as Schedule) : undefined;
  const sourceWorkflowId = opt(row.source_workflow_id);
  const channel: Workflow['channel'] = {
    inputs: fromJson<ChannelInputEndpoint[]>(row.channel_inputs, []),
    outputs: fromJson<ChannelOutput[]>(row.channel_outputs, []),
  };
  const set = <K extends keyof Workflow['channel']>(key: K, value: Workflow['channel'][K] | undefined) => {
    if (value !== undefined) channel[key] = value;
  };
  set('region', opt(row.channel_region));
  set('startRequestedAt', optNum(row.start_requested_at));
  set('startedAt', optNum(row.started_at));
  set('stopRequestedAt', optNum(row.stop_requested_at));
  set('stoppedAt', optNum(row.stopped_at));
  set('activeInput', opt(row.active_input));
  set('archiveStatus', opt(row.archive_status));
  set('archiveUrl', opt(row.archive_url));
  const scheduleState: Workflow['scheduleState'] = {};
  if (row.schedule_handled_at !== null) scheduleState.handledAt = Number(row.schedule_handled_at);
  if (row.schedule_stop_at !== null) scheduleState.stopAt = Number(row.schedule_stop_at);
  if (row.schedule_channel_id !== null) scheduleState.channelId = row.schedule_channel_id;
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    ...(description !== undefined ? { description } : {}),
    status: row.status as WorkflowStatus,
    ...(statusReason !== undefined ? { statusReason } : {}),
    ...(blueprintId !== undefined ? { blueprintId } : {}),
    blueprint: fromJson<Blueprint>(row.blueprint, { components: {} }),
    region: row.region,
    regionGiven: Number(row.region_given) === 1,
    tags: fromJson<string[]>(row.tags, []),
    subscriptions: fromJson<unknown[]>(row.subscriptions, []),
    inputWhitelistCIDRs: fromJson<string[]>(row.input_whitelist_cidrs, []),
    ...(schedule ? { schedule } : {}),
    ...(sourceWorkflowId !== undefined ? { sourceWorkflowId } : {}),
    channel,
    scheduleState,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Fields a caller sets on the row along with a status change or on its own. */
export type WorkflowPatch = Partial<Omit<WorkflowTable, 'id' | 'organization_id' | 'created_at' | 'status'>>;

/** What creation takes: the stored workflow's own fields, before status, id and channel exist. */
export type NewWorkflow = Pick<
  Workflow,
  'organizationId' | 'name' | 'description' | 'blueprint' | 'region' | 'regionGiven' | 'tags' | 'subscriptions' | 'inputWhitelistCIDRs' | 'schedule' | 'sourceWorkflowId'
>;

export function contentColumns(input: Omit<NewWorkflow, 'organizationId' | 'sourceWorkflowId'>): WorkflowPatch {
  return {
    name: input.name,
    description: input.description ?? null,
    blueprint_id: typeof input.blueprint.id === 'string' ? input.blueprint.id : null,
    blueprint: toJson(input.blueprint),
    region: input.region,
    region_given: input.regionGiven ? 1 : 0,
    tags: toJson(input.tags),
    subscriptions: toJson(input.subscriptions),
    input_whitelist_cidrs: toJson(input.inputWhitelistCIDRs),
    schedule: input.schedule ? toJson(input.schedule) : null,
  };
}

export class WorkflowStore {
  constructor(readonly db: Db) {}

  async insert(trx: Tx, id: string, input: NewWorkflow, now: number): Promise<void> {
    const content = contentColumns(input);
    await trx
      .insertInto('workflows')
      .values({
        ...(content as Required<Pick<WorkflowTable, 'name' | 'blueprint' | 'region' | 'region_given' | 'tags' | 'subscriptions' | 'input_whitelist_cidrs'>>),
        description: content.description ?? null,
        blueprint_id: content.blueprint_id ?? null,
        schedule: content.schedule ?? null,
        id,
        organization_id: input.organizationId,
        status: 'READY',
        status_reason: null,
        source_workflow_id: input.sourceWorkflowId ?? null,
        channel_region: null, start_requested_at: null, started_at: null, stop_requested_at: null, stopped_at: null,
        channel_inputs: null, channel_outputs: null, active_input: null, archive_status: null, archive_url: null,
        schedule_handled_at: null, schedule_stop_at: null, schedule_channel_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await recordChannelEvent(trx, { workflowId: id, organizationId: input.organizationId, status: 'CREATED', region: input.region, at: now });
  }

  async get(organizationId: string, id: string, db: Db | Tx = this.db): Promise<Workflow | undefined> {
    const row = await db.selectFrom('workflows').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row ? toWorkflow(row) : undefined;
  }

  /** For workers that act for every organization (scheduler, runtime events). */
  async getAnyOrganization(id: string): Promise<Workflow | undefined> {
    const row = await this.db.selectFrom('workflows').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toWorkflow(row) : undefined;
  }

  async list(organizationId: string, options: { statuses?: string[]; sort: 'asc' | 'desc'; started?: boolean }): Promise<Workflow[]> {
    let query = this.db.selectFrom('workflows').selectAll().where('organization_id', '=', organizationId);
    if (options.statuses?.length) query = query.where('status', 'in', options.statuses);
    if (options.started) query = query.where('start_requested_at', 'is not', null);
    const rows = await query.orderBy('created_at', options.sort).orderBy('id', options.sort).execute();
    return rows.map(toWorkflow);
  }

  async withSchedules(): Promise<Workflow[]> {
    return (await this.db.selectFrom('workflows').selectAll().where('schedule', 'is not', null).execute()).map(toWorkflow);
  }

  /** Sets fields without a status change, only while the status is one of `when` (the lock rule). */
  async patch(organizationId: string, id: string, when: readonly WorkflowStatus[], patch: WorkflowPatch, db: Db | Tx = this.db): Promise<boolean> {
    const result = await db
      .updateTable('workflows')
      .set(patch)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('status', 'in', [...when])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Moves the workflow from one of `from` to `to` atomically and records the statistics event; false when
   * the workflow was not in `from` any more (another request or worker moved it first).
   */
  async transition(workflow: Pick<Workflow, 'id' | 'organizationId'>, from: readonly WorkflowStatus[], to: WorkflowStatus, now: number, patch: WorkflowPatch = {}, trx?: Tx): Promise<boolean> {
    const run = async (tx: Tx): Promise<boolean> => {
      const result = await tx
        .updateTable('workflows')
        .set({ ...patch, status: to, updated_at: now })
        .where('organization_id', '=', workflow.organizationId)
        .where('id', '=', workflow.id)
        .where('status', 'in', [...from])
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      const row = await tx.selectFrom('workflows').select(['region', 'channel_region', 'name', 'status_reason', 'archive_status', 'archive_url']).where('id', '=', workflow.id).executeTakeFirstOrThrow();
      await recordChannelEvent(tx, { workflowId: workflow.id, organizationId: workflow.organizationId, status: to, region: row.channel_region ?? row.region, at: now });
      const about = { organizationId: workflow.organizationId, workflowId: workflow.id, name: row.name, at: now };
      await notify(tx, workflowStatusEvent({ ...about, status: to, reason: row.status_reason }));
      if (to === 'DONE' && row.archive_status === 'AVAILABLE' && row.archive_url) await notify(tx, archiveReadyEvent({ ...about, archiveUrl: row.archive_url }));
      return true;
    };
    return trx ? run(trx) : this.db.transaction().execute(run);
  }

  /** Deletes the row when its status is one of `when`; records DELETED. */
  async remove(workflow: Pick<Workflow, 'id' | 'organizationId'>, when: readonly WorkflowStatus[], now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('workflows').select(['region', 'channel_region', 'name']).where('organization_id', '=', workflow.organizationId).where('id', '=', workflow.id).where('status', 'in', [...when]).executeTakeFirst();
      if (!row) return false;
      await trx.deleteFrom('workflows').where('id', '=', workflow.id).execute();
      await recordChannelEvent(trx, { workflowId: workflow.id, organizationId: workflow.organizationId, status: 'DELETED', region: row.channel_region ?? row.region, at: now });
      await notify(trx, workflowStatusEvent({ organizationId: workflow.organizationId, workflowId: workflow.id, name: row.name, status: 'DELETED', reason: null, at: now }));
      return true;
    });
  }
}
