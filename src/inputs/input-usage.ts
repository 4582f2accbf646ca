// Which workflows use a managed input, and the input status that follows from them (spec 3.4).
// The `workflows` table belongs to the workflows part; this is the ONE place that reads it for inputs,
// so a change of its columns or of where a blueprint names its managed input is adapted here only.
import type { Kysely } from 'kysely';
import type { Db, Tx } from '../../kernel/store/database.js';

export const INPUT_STATUSES = ['DETACHED', 'ATTACHED', 'ACTIVE', 'LOCKED'] as const;
export type InputStatus = (typeof INPUT_STATUSES)[number];

export interface WorkflowUse {
  id: string;
  name: string;
  status: string;
}

/** The columns read here; declared locally so this module does not fight the workflows part's Tables entry. */
interface WorkflowView {
  workflows: { id: string; organization_id: string; status: string; name: string; blueprint: string };
}

/** Collects every `managedInputId` string anywhere in a blueprint (`components.<name>.input.managedInputId`, input lists…). */
export function managedInputIds(blueprint: unknown): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown, depth: number): void => {
    if (depth > 12 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      if (key === 'managedInputId' && typeof child === 'string') found.add(child);
      else visit(child, depth + 1);
    }
  };
  visit(blueprint, 0);
  return found;
}

function isMissingTable(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /no such table|relation .* does not exist/i.test(message);
}

/**
 * The workflows of an organization whose blueprint names a managed input, per input id (one query for a
 * whole list). An engine without the workflows part (other roles, or before its migration) has no table:
 * no workflow uses any input then. `inputId` narrows the read to one input.
 */
export async function workflowUsesByInput(db: Db | Tx, organizationId: string, inputId?: string): Promise<Map<string, WorkflowUse[]>> {
  const view = db as unknown as Kysely<WorkflowView>;
  const uses = new Map<string, WorkflowUse[]>();
  try {
    // The LIKE narrows the rows in the database; the JSON walk decides (an id in a description is no use).
    const rows = await view
      .selectFrom('workflows')
      .select(['id', 'name', 'status', 'blueprint'])
      .where('organization_id', '=', organizationId)
      .where('blueprint', 'like', inputId ? `%${inputId}%` : '%managedInputId%')
      .orderBy('id')
      .execute();
    for (const row of rows) {
      let ids: Set<string>;
      try {
        ids = managedInputIds(JSON.parse(row.blueprint));
      } catch {
        continue;
      }
      for (const id of ids) {
        if (inputId && id !== inputId) continue;
        const list = uses.get(id) ?? [];
        list.push({ id: row.id, name: row.name, status: row.status });
        uses.set(id, list);
      }
    }
    return uses;
  } catch (error) {
    if (isMissingTable(error)) return uses;
    throw error;
  }
}

/** Workflow statuses (3.1) whose channel is being created, runs, or is being stopped: the input is ACTIVE. */
const ACTIVE_WORKFLOW = new Set(['PROVISIONING', 'STARTING', 'RUNNING', 'STOPPING', 'DELETING']);
/**
 * STOP_FAILED: the channel could not be stopped or deleted and its resources were not cleaned up, the
 * counterpart of the encoder states DELETED/UPDATE_FAILED of 3.4: the input is LOCKED. START_FAILED rolls
 * everything back (3.1), so it leaves no channel behind and does not lock the input.
 */
const LOCKED_WORKFLOW = new Set(['STOP_FAILED']);
/** READY: configured, not started; our counterpart of "a channel exists and is IDLE": ATTACHED. */
const ATTACHED_WORKFLOW = new Set(['READY']);
/** Terminal statuses: the workflow left the "configured and not yet started" list (spec 2.4). */
const FINISHED_WORKFLOW = new Set(['DONE', 'START_FAILED', 'STOP_FAILED']);

/** ACTIVE wins over LOCKED so that a running channel always blocks deletion of its input. */
export function inputStatus(uses: readonly WorkflowUse[]): InputStatus {
  if (uses.some((use) => ACTIVE_WORKFLOW.has(use.status))) return 'ACTIVE';
  if (uses.some((use) => LOCKED_WORKFLOW.has(use.status))) return 'LOCKED';
  if (uses.some((use) => ATTACHED_WORKFLOW.has(use.status))) return 'ATTACHED';
  return 'DETACHED';
}

/**
 * Spec 2.4: the workflows configured to use the input and not yet started. "A workflow leaves that list
 * after its channel was started and then stopped, or failed while starting or stopping": so a workflow
 * stays listed until it reaches DONE, START_FAILED or STOP_FAILED (each item carries its status).
 */
export function pendingWorkflows(uses: readonly WorkflowUse[]): WorkflowUse[] {
  return uses.filter((use) => !FINISHED_WORKFLOW.has(use.status));
}

/**
 * Spec 3.4, literally: "A managed input can be edited only when its status is neither ATTACHED nor
 * DETACHED". This reads inverted (it allows edits only while a channel is ACTIVE or LOCKED, and forbids
 * them on a fresh input), but it is what the interface states, so it is implemented as written.
 */
export function canEdit(status: InputStatus): boolean {
  return status !== 'ATTACHED' && status !== 'DETACHED';
}
