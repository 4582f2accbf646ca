// Channel commands between processes (DESIGN.md "Processes and scale"): an api process without a local runtime writes
// a command row, a packager process claims it, runs it on its runtime and writes the result back. Packagers heartbeat
// in `packager_processes`; `channel_owners` names the packager that runs each channel, so its later commands go there.
import type { Db, Dialect, Tx } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';

import { STALE_MS, type ChannelCommandKind, type ChannelCommandQueue } from '../../kernel/seams/channel-commands.js';

// The kinds and the heartbeat belong to the seam the packager sees; re-exported for the control plane's callers.
export { CHANNEL_COMMAND_KINDS, HEARTBEAT_MS, STALE_MS, type ChannelCommandKind } from '../../kernel/seams/channel-commands.js';
export type ChannelCommandStatus = 'pending' | 'running' | 'done' | 'failed';

export interface ChannelCommandTable {
  id: string;
  workflow_id: string;
  kind: ChannelCommandKind;
  /** JSON text (the arguments of the ChannelRuntime call) */
  payload: string;
  /** packager id that must run it; null: any packager (a start) */
  target: string | null;
  status: ChannelCommandStatus;
  claimed_by: string | null;
  /** JSON text of what the runtime answered */
  result: string | null;
  error: string | null;
  created_at: number;
  claimed_at: number | null;
  finished_at: number | null;
}

export interface ChannelOwnerTable {
  workflow_id: string;
  packager_id: string;
  since: number;
}

export interface PackagerProcessTable {
  id: string;
  public_url: string;
  started_at: number;
  beat_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    channel_commands: ChannelCommandTable;
    channel_owners: ChannelOwnerTable;
    packager_processes: PackagerProcessTable;
  }
}

export type ChannelCommand = ChannelCommandTable;

export async function beat(db: Db, id: string, publicUrl: string, now: number): Promise<void> {
  await db
    .insertInto('packager_processes')
    .values({ id, public_url: publicUrl, started_at: now, beat_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ beat_at: now, public_url: publicUrl }))
    .execute();
}

/** A packager shutting down says so: commands fail at once instead of waiting for the heartbeat to age. */
export async function leave(db: Db, id: string): Promise<void> {
  await db.deleteFrom('packager_processes').where('id', '=', id).execute();
}

/** Ids of the packagers that beat within STALE_MS. */
export async function livePackagers(db: Db, now: number): Promise<string[]> {
  const rows = await db.selectFrom('packager_processes').select('id').where('beat_at', '>=', now - STALE_MS).execute();
  return rows.map((row) => row.id);
}

export async function enqueue(db: Db, command: { workflowId: string; kind: ChannelCommandKind; payload: unknown; target: string | null }, now: number): Promise<string> {
  const id = newId();
  await db
    .insertInto('channel_commands')
    .values({
      id, workflow_id: command.workflowId, kind: command.kind, payload: JSON.stringify(command.payload ?? null), target: command.target,
      status: 'pending', claimed_by: null, result: null, error: null, created_at: now, claimed_at: null, finished_at: null,
    })
    .execute();
  return id;
}

export async function readCommand(db: Db, id: string): Promise<ChannelCommand | undefined> {
  return db.selectFrom('channel_commands').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The last start command of a channel (a workflow is started once: a restart duplicates it under a new id). */
export async function lastStartCommand(db: Db, workflowId: string): Promise<ChannelCommand | undefined> {
  return db
    .selectFrom('channel_commands')
    .selectAll()
    .where('workflow_id', '=', workflowId)
    .where('kind', '=', 'start')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Claims the oldest pending command this packager may run (its own or an untargeted one), or none; a start claimed
 * makes this packager the channel's owner. PostgreSQL: FOR UPDATE SKIP LOCKED in one transaction keeps packagers
 * polling at once off the same row. SQLite: one UPDATE … RETURNING statement, since a read transaction upgraded to a
 * write fails at once (SQLITE_BUSY) when another connection reads; the status guard makes the claim exact on both.
 */
export async function claimNext(db: Db, dialect: Dialect, packagerId: string, now: number): Promise<ChannelCommand | undefined> {
  const claim = async (trx: Db | Tx) => {
    let next = trx
      .selectFrom('channel_commands')
      .select('id')
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('target', 'is', null), eb('target', '=', packagerId)]))
      .orderBy('created_at')
      .orderBy('id')
      .limit(1);
    if (dialect === 'postgres') next = next.forUpdate().skipLocked();
    const claimed = await trx
      .updateTable('channel_commands')
      .set({ status: 'running', claimed_by: packagerId, claimed_at: now })
      .where('id', '=', next)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    if (claimed?.kind === 'start') {
      await trx
        .insertInto('channel_owners')
        .values({ workflow_id: claimed.workflow_id, packager_id: packagerId, since: now })
        .onConflict((oc) => oc.column('workflow_id').doUpdateSet({ packager_id: packagerId, since: now }))
        .execute();
    }
    return claimed;
  };
  return dialect === 'postgres' ? db.transaction().execute(claim) : claim(db);
}

export async function finish(db: Db, id: string, outcome: { result: unknown } | { error: string }, now: number): Promise<void> {
  await db
    .updateTable('channel_commands')
    .set('error' in outcome ? { status: 'failed', error: outcome.error, finished_at: now } : { status: 'done', result: JSON.stringify(outcome.result ?? null), finished_at: now })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** Withdraws a command nobody claimed (its sender gave up); false when a packager took it meanwhile. */
export async function cancel(db: Db, id: string, reason: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('channel_commands')
    .set({ status: 'failed', error: reason, finished_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function ownerOf(db: Db, workflowId: string): Promise<string | undefined> {
  const row = await db.selectFrom('channel_owners').select('packager_id').where('workflow_id', '=', workflowId).executeTakeFirst();
  return row?.packager_id;
}

/** A packager that resumed channels after a restart runs them under a new id: later commands must reach it. */
export async function adoptChannels(db: Db, packagerId: string, workflowIds: readonly string[], now: number): Promise<void> {
  for (const workflowId of workflowIds) {
    await db
      .insertInto('channel_owners')
      .values({ workflow_id: workflowId, packager_id: packagerId, since: now })
      .onConflict((oc) => oc.column('workflow_id').doUpdateSet({ packager_id: packagerId, since: now }))
      .execute();
  }
}

export async function releaseOwner(db: Db, workflowId: string): Promise<void> {
  await db.deleteFrom('channel_owners').where('workflow_id', '=', workflowId).execute();
}

/** Finished commands are of no use after a day: the table stays small. */
export async function pruneCommands(db: Db, before: number): Promise<void> {
  await db.deleteFrom('channel_commands').where('status', 'in', ['done', 'failed']).where('created_at', '<', before).execute();
}

/** The packager's side of these tables (kernel/seams/channel-commands.ts): what ChannelCommandWorker is given. */
export function channelCommandQueue(db: Db, dialect: Dialect): ChannelCommandQueue {
  return {
    beat: (packagerId, publicUrl, now) => beat(db, packagerId, publicUrl, now),
    leave: (packagerId) => leave(db, packagerId),
    claimNext: async (packagerId, now) => {
      const row = await claimNext(db, dialect, packagerId, now);
      return row && { id: row.id, workflowId: row.workflow_id, kind: row.kind, payload: row.payload };
    },
    finish: (commandId, outcome, now) => finish(db, commandId, outcome, now),
    releaseOwner: (workflowId) => releaseOwner(db, workflowId),
    prune: (before) => pruneCommands(db, before),
  };
}
