// Every workflow status transition is one row here; GET /channels/statistics counts them (spec 4.2.10).
// The workflows part calls recordChannelEvent on each transition, with 'CREATED' on creation and
// 'DELETED' on delete, inside its own transaction when it has one (pass the Tx then: SQLite has one
// connection and a write through `db` inside a transaction deadlocks).
import type { Db, Tx } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';

export interface ChannelEventTable {
  id: string;
  organization_id: string;
  workflow_id: string;
  status: string;
  region: string;
  /** epoch ms of the transition (ctx.clock) */
  at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    channel_events: ChannelEventTable;
  }
}

export interface ChannelEvent {
  workflowId: string;
  organizationId: string;
  /** a workflow status of spec 3.1, or CREATED / DELETED */
  status: string;
  region: string;
  at: number;
}

export async function recordChannelEvent(db: Db | Tx, event: ChannelEvent): Promise<void> {
  await db
    .insertInto('channel_events')
    .values({
      id: newId(),
      organization_id: event.organizationId,
      workflow_id: event.workflowId,
      status: event.status,
      region: event.region,
      at: event.at,
    })
    .execute();
}

/** The events of one organization in [fromMs, toMs), optionally of some statuses and one region. */
export async function listChannelEvents(
  db: Db,
  query: { organizationId: string; fromMs: number; toMs: number; statuses?: readonly string[]; region?: string },
): Promise<ChannelEvent[]> {
  let select = db
    .selectFrom('channel_events')
    .select(['workflow_id', 'organization_id', 'status', 'region', 'at'])
    .where('organization_id', '=', query.organizationId)
    .where('at', '>=', query.fromMs)
    .where('at', '<', query.toMs);
  if (query.statuses && query.statuses.length > 0) select = select.where('status', 'in', [...query.statuses]);
  if (query.region) select = select.where('region', '=', query.region);
  const rows = await select.orderBy('at').execute();
  return rows.map((row) => ({
    workflowId: row.workflow_id,
    organizationId: row.organization_id,
    status: row.status,
    region: row.region,
    at: Number(row.at),
  }));
}
