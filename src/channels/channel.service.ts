// The channel state machine of spec 3.1. Requests move a workflow into PROVISIONING / STOPPING / DELETING and
// answer at once; the rest runs asynchronously here, every step through WorkflowStore.transition.
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { toJson } from '../../kernel/store/database.js';
import { blueprintInputs } from '../blueprints/blueprint.schema.js';
import type { ChannelEndpoints, ChannelRuntime, ChannelRuntimeEvent, ChannelSpec, HeldStart } from '../../kernel/seams/channel-runtime.js';
import type { Workflow, WorkflowStore } from '../workflows/workflow.store.js';
import { LOCKED_STATUSES, type WorkflowStatus } from '../workflows/workflow.schema.js';
import { applyArchiveRules } from './archive-rules.js';
import { clearAlarms } from './channel-telemetry.store.js';
import { recordRuntimeEvent } from './runtime-events.js';
import { NO_RUNTIME_REASON } from './channel-runtime.service.js';
import { syncWorkflowSubscriptions } from '../notifications/workflow-subscriptions.js';

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 1000);

export interface StartedChannel {
  workflowId: string;
  sourceWorkflowId?: string;
}

export class ChannelService {
  private readonly inFlight = new Set<Promise<void>>();
  private subscribedTo: ChannelRuntime | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly ctx: EngineContext, readonly workflows: WorkflowStore) {}

  private now(): number {
    return this.ctx.clock.nowMs();
  }

  /** The registered runtime, subscribed to its events the first time it is seen. */
  runtime(): ChannelRuntime | undefined {
    const runtime = this.ctx.services.channelRuntime;
    if (runtime !== this.subscribedTo) {
      this.unsubscribe?.();
      this.subscribedTo = runtime;
      this.unsubscribe = runtime?.subscribe?.((event) => this.track(this.onRuntimeEvent(event)));
    }
    return runtime;
  }

  /** Resolves when every asynchronous transition started so far has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  close(): Promise<void> {
    this.unsubscribe?.();
    return this.settled();
  }

  private track(work: Promise<void>): void {
    const guarded = work.catch((error: unknown) => this.ctx.logger.error({ err: error }, 'a channel transition failed unexpectedly'));
    this.inFlight.add(guarded);
    void guarded.finally(() => this.inFlight.delete(guarded));
  }

  private async load(organizationId: string, ids: readonly string[]): Promise<Workflow[]> {
    const unique = [...new Set(ids)];
    const found = await Promise.all(unique.map((id) => this.workflows.get(organizationId, id)));
    return found.map((workflow, index) => {
      if (!workflow) throw notFound('Workflow', unique[index] ?? '');
      return workflow;
    });
  }

  /** POST /channels: all ids are checked before anything changes; DONE workflows are duplicated and the copy started. */
  async start(organizationId: string, ids: readonly string[]): Promise<StartedChannel[]> {
    const workflows = await this.load(organizationId, ids);
    for (const workflow of workflows) {
      if (workflow.status === 'START_FAILED' || workflow.status === 'STOP_FAILED') {
        throw engineError('WORKFLOW_START_FAILED', `workflow ${workflow.id} is ${workflow.status}${workflow.statusReason ? ` (${workflow.statusReason})` : ''}; create a new workflow`);
      }
      if (workflow.status !== 'READY' && workflow.status !== 'DONE') {
        throw engineError('CHANNEL_ALREADY_STARTED', `workflow ${workflow.id} is ${workflow.status}`);
      }
    }
    const started: StartedChannel[] = [];
    for (const workflow of workflows) {
      const target = workflow.status === 'DONE' ? await this.duplicate(workflow) : workflow;
      await this.beginStart(target);
      started.push({ workflowId: target.id, ...(target.id !== workflow.id ? { sourceWorkflowId: workflow.id } : {}) });
    }
    return started;
  }

  /** A READY copy of a finished workflow; the schedule stays with the original (it would start twice otherwise). */
  async duplicate(workflow: Workflow): Promise<Workflow> {
    const id = newId();
    const now = this.now();
    await this.workflows.db.transaction().execute(async (trx) => {
      await this.workflows.insert(trx, id, {
        organizationId: workflow.organizationId,
        name: workflow.name,
        description: workflow.description,
        blueprint: workflow.blueprint,
        region: workflow.region,
        regionGiven: workflow.regionGiven,
        tags: workflow.tags,
        subscriptions: workflow.subscriptions,
        inputWhitelistCIDRs: workflow.inputWhitelistCIDRs,
        sourceWorkflowId: workflow.id,
      }, now);
      await syncWorkflowSubscriptions(this.ctx, trx, { id, organizationId: workflow.organizationId, subscriptions: workflow.subscriptions });
    });
    const copy = await this.workflows.get(workflow.organizationId, id);
    if (!copy) throw new Error(`duplicate ${id} vanished`);
    return copy;
  }

  private async beginStart(workflow: Workflow): Promise<void> {
    const now = this.now();
    const firstInput = blueprintInputs(workflow.blueprint)[0]?.name ?? null;
    const moved = await this.workflows.transition(workflow, ['READY'], 'PROVISIONING', now, {
      start_requested_at: now, channel_region: workflow.region, status_reason: null, active_input: firstInput,
      started_at: null, stop_requested_at: null, stopped_at: null, archive_status: null, archive_url: null,
    });
    if (!moved) throw engineError('CHANNEL_ALREADY_STARTED', `workflow ${workflow.id} was started by another request`);
    this.track(this.runStart(workflow));
  }

  private async runStart(workflow: Workflow): Promise<void> {
    const runtime = this.runtime();
    await this.settleStart(workflow, runtime, async ({ blueprint, archive }) => {
      if (!(await this.workflows.transition(workflow, ['PROVISIONING'], 'STARTING', this.now()))) return undefined;
      if (!runtime) throw new Error(NO_RUNTIME_REASON);
      const activeInput = blueprintInputs(workflow.blueprint)[0]?.name ?? '';
      return runtime.start({
        workflowId: workflow.id, organizationId: workflow.organizationId, region: workflow.region,
        blueprint, inputWhitelistCIDRs: workflow.inputWhitelistCIDRs, archive, activeInput,
      });
    });
  }

  /**
   * Waits for a start (`started`: sent now, or sent before a restart and held by a packager) and moves the workflow
   * from STARTING to RUNNING with its endpoints, or to START_FAILED with the cause after rolling back what it made.
   * `started` resolving undefined: nothing was started (the workflow moved on meanwhile).
   */
  private async settleStart(
    workflow: Workflow,
    runtime: ChannelRuntime | undefined,
    started: (rules: Pick<ChannelSpec, 'blueprint' | 'archive'>) => Promise<ChannelEndpoints | undefined>,
  ): Promise<void> {
    const fail = async (reason: string) => {
      if (runtime) await runtime.stop(workflow.id).catch((error: unknown) => this.ctx.logger.warn({ err: error, workflowId: workflow.id }, 'rollback of a failed start failed'));
      await this.workflows.transition(workflow, ['PROVISIONING', 'STARTING'], 'START_FAILED', this.now(), { status_reason: reason, archive_status: null });
    };
    try {
      const rules = applyArchiveRules(workflow.blueprint);
      const { archive } = rules;
      const endpoints = await started(rules);
      if (!endpoints) return;
      const now = this.now();
      const running = await this.workflows.transition(workflow, ['STARTING'], 'RUNNING', now, {
        started_at: now, channel_inputs: toJson(endpoints.inputs), channel_outputs: toJson(endpoints.outputs),
        archive_status: archive.enabled ? 'RECORDING' : 'NONE',
      });
      if (!running) await runtime?.stop(workflow.id).catch(() => undefined);
    } catch (error) {
      await fail(message(error));
    }
  }

  /** DELETE /channels: idempotent for channels stopping, stopped or never running; refused for never-started ones. */
  async stop(organizationId: string, ids: readonly string[]): Promise<Array<{ workflowId: string; status: WorkflowStatus }>> {
    const workflows = await this.load(organizationId, ids);
    for (const workflow of workflows) {
      if (workflow.status === 'READY') throw engineError('CHANNEL_NOT_STARTED', `no channel was started from workflow ${workflow.id}`);
      if (workflow.status === 'PROVISIONING' || workflow.status === 'STARTING') {
        throw engineError('WORKFLOW_LOCKED', `the channel of workflow ${workflow.id} is ${workflow.status}; stop it once it runs or fails`);
      }
    }
    const answer: Array<{ workflowId: string; status: WorkflowStatus }> = [];
    for (const workflow of workflows) {
      let status = workflow.status;
      if (status === 'RUNNING' || status === 'STOP_FAILED') {
        const now = this.now();
        if (await this.workflows.transition(workflow, ['RUNNING', 'STOP_FAILED'], 'STOPPING', now, { stop_requested_at: now, status_reason: null })) {
          status = 'STOPPING';
          this.track(this.runStop(workflow, 'STOPPING'));
        }
      }
      answer.push({ workflowId: workflow.id, status });
    }
    return answer;
  }

  /** DELETE /workflows/{id}: a running channel is stopped first (DELETING), everything else goes at once. */
  async deleteWorkflow(organizationId: string, id: string): Promise<WorkflowStatus | 'DELETED'> {
    const [workflow] = await this.load(organizationId, [id]);
    if (!workflow) throw notFound('Workflow', id);
    if (LOCKED_STATUSES.includes(workflow.status)) throw engineError('WORKFLOW_LOCKED', `workflow ${id} is ${workflow.status}`);
    if (workflow.status === 'RUNNING') {
      const now = this.now();
      if (await this.workflows.transition(workflow, ['RUNNING'], 'DELETING', now, { stop_requested_at: now })) {
        this.track(this.runStop(workflow, 'DELETING'));
        return 'DELETING';
      }
      throw engineError('WORKFLOW_LOCKED', `workflow ${id} changed state meanwhile; retry`);
    }
    if (!(await this.workflows.remove(workflow, ['READY', 'DONE', 'START_FAILED', 'STOP_FAILED'], this.now()))) {
      throw engineError('WORKFLOW_LOCKED', `workflow ${id} changed state meanwhile; retry`);
    }
    return 'DELETED';
  }

  private async runStop(workflow: Workflow, from: 'STOPPING' | 'DELETING'): Promise<void> {
    const runtime = this.runtime();
    try {
      // Without a runtime nothing of this channel runs in this engine any more: the stop has nothing to undo.
      const result = runtime ? await runtime.stop(workflow.id) : {};
      const now = this.now();
      await clearAlarms(this.workflows.db, workflow.id, now);
      if (from === 'DELETING') {
        await this.workflows.remove(workflow, ['DELETING'], now);
        return;
      }
      const archive = result.archiveUrl ? { archive_status: 'AVAILABLE', archive_url: result.archiveUrl } : { archive_status: workflow.channel.archiveStatus === 'RECORDING' ? 'MISSING' : 'NONE', archive_url: null };
      await this.workflows.transition(workflow, ['STOPPING'], 'DONE', now, { stopped_at: now, ...archive });
    } catch (error) {
      await this.workflows.transition(workflow, [from], 'STOP_FAILED', this.now(), { status_reason: message(error) });
    }
  }

  /**
   * After a restart: a start that a live packager still runs (sent by this engine before it restarted) is waited for
   * again; any other start cut off mid-way failed (an in-process start died with the process); stops and deletes
   * cut off mid-way run again.
   */
  async recover(): Promise<void> {
    const runtime = this.runtime(); // subscribes to a runtime registered at init before it reports anything
    const rows = await this.workflows.db.selectFrom('workflows').select(['id', 'organization_id', 'status']).where('status', 'in', [...LOCKED_STATUSES]).execute();
    for (const row of rows) {
      const workflow = await this.workflows.get(row.organization_id, row.id);
      if (!workflow) continue;
      if (row.status === 'PROVISIONING' || row.status === 'STARTING') {
        // PROVISIONING: the start was not sent yet
        const held = row.status === 'STARTING' ? await this.heldStart(runtime, row.id) : undefined;
        if (held) {
          this.track(this.settleStart(workflow, runtime, () => held.result()));
          continue;
        }
        await runtime?.stop(row.id).catch(() => undefined);
        await this.workflows.transition(workflow, ['PROVISIONING', 'STARTING'], 'START_FAILED', this.now(), { status_reason: 'the engine restarted while the channel was starting' });
      } else this.track(this.runStop(workflow, row.status as 'STOPPING' | 'DELETING'));
    }
  }

  private async heldStart(runtime: ChannelRuntime | undefined, workflowId: string): Promise<HeldStart | undefined> {
    try {
      return await runtime?.heldStart?.(workflowId);
    } catch (error) {
      this.ctx.logger.warn({ err: error, workflowId }, 'whether a packager still runs the start of a channel could not be read');
      return undefined;
    }
  }

  private onRuntimeEvent(event: ChannelRuntimeEvent): Promise<void> {
    return recordRuntimeEvent(this.workflows, event);
  }
}
