// The durable outbox: notify(tx, event) writes one message per confirmed subscriber in the transaction of the change
// it reports, so a change is never reported without having happened, nor happens unreported (issue 16).
import { EventEmitter } from 'node:events';
import type { Db, Dialect, Tx } from '../../kernel/store/database.js';
import { randomBytes } from 'node:crypto';
import type { NotificationEvent } from './notification.schema.js';

export interface NotificationOutboxTable {
  id: string;
  organization_id: string;
  subscription_id: string;
  /** SubscriptionConfirmation | Notification */
  kind: string;
  event: string;
  subject: string;
  /** the exact JSON that is sent and signed */
  body: string;
  /** pending | delivered | failed (gave up after the delivery window) | cancelled (subscription gone) */
  status: string;
  attempts: number;
  next_attempt_at: number;
  expires_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    notification_outbox: NotificationOutboxTable;
  }
}

export type MessageKind = 'SubscriptionConfirmation' | 'Notification';

/** Issue 16: retried with exponential backoff for 24 h, then given up (status failed). */
export const DELIVERY_WINDOW_MS = 24 * 3600_000;

// Wakes dispatchers of this process shortly after a write, so a message waits less than a poll interval;
// the poll stays the guarantee (the writing transaction may commit later than the wake).
const signal = new EventEmitter();
signal.setMaxListeners(0);
export function onOutboxWrite(listener: () => void): () => void {
  signal.on('write', listener);
  return () => signal.off('write', listener);
}

let lastMs = 0;
let sequence = 0;
/**
 * A UUIDv7 (RFC 9562): time-ordered with a per-process counter, so ordering by id sends the messages of one change,
 * and of one subscription, in the order they were written.
 */
export function messageId(nowMs: number = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    sequence = 0;
  } else if (++sequence > 0xfff) {
    // 4096 ids in one millisecond: borrow the next millisecond rather than wrap
    lastMs += 1;
    sequence = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes.writeUInt16BE(0x7000 | sequence, 6);
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export async function enqueueMessage(
  tx: Tx,
  message: { organizationId: string; subscriptionId: string; kind: MessageKind; event: string; subject: string; at: number; body: (messageId: string) => Record<string, unknown> },
): Promise<string> {
  const id = messageId();
  await tx
    .insertInto('notification_outbox')
    .values({
      id,
      organization_id: message.organizationId,
      subscription_id: message.subscriptionId,
      kind: message.kind,
      event: message.event,
      subject: message.subject.slice(0, 500),
      body: JSON.stringify(message.body(id)),
      status: 'pending',
      attempts: 0,
      next_attempt_at: message.at,
      expires_at: message.at + DELIVERY_WINDOW_MS,
      locked_by: null,
      locked_until: null,
      last_error: null,
      delivered_at: null,
      created_at: message.at,
    })
    .execute();
  signal.emit('write');
  return id;
}

/**
 * Reports a state change to every confirmed subscription of the organization, plus the workflow's own ones for
 * workflow events; call it with the transaction that writes the change. An endpoint subscribed twice gets one message.
 */
export async function notify(tx: Tx, event: NotificationEvent): Promise<number> {
  const workflowId = event.workflowId;
  const subscribers = await tx
    .selectFrom('notification_subscriptions')
    .select(['id', 'type', 'endpoint', 'workflow_id'])
    .where('organization_id', '=', event.organizationId)
    .where('status', '=', 'Confirmed')
    .where((eb) => (workflowId ? eb.or([eb('workflow_id', 'is', null), eb('workflow_id', '=', workflowId)]) : eb('workflow_id', 'is', null)))
    .orderBy('created_at')
    .execute();
  const seen = new Set<string>();
  let written = 0;
  for (const subscriber of subscribers) {
    const key = `${subscriber.type} ${subscriber.endpoint}`;
    if (seen.has(key)) continue;
    seen.add(key);
    await enqueueMessage(tx, {
      organizationId: event.organizationId,
      subscriptionId: subscriber.id,
      kind: 'Notification',
      event: event.type,
      subject: event.subject,
      at: event.at,
      body: (messageId) => ({
        Type: 'Notification',
        MessageId: messageId,
        Timestamp: new Date(event.at).toISOString(),
        SubscriptionId: subscriber.id,
        OrganizationId: event.organizationId,
        Event: event.type,
        Subject: event.subject,
        Data: event.data,
      }),
    });
    written += 1;
  }
  return written;
}

export type OutboxMessage = NotificationOutboxTable;

/**
 * Leases up to `limit` due messages to `worker`. On PostgreSQL, FOR UPDATE SKIP LOCKED keeps engines that poll at
 * the same moment from taking the same rows; the lease keeps them off while the claimer sends (SQLite: one process).
 */
export async function claimDue(db: Db, dialect: Dialect, worker: string, now: number, leaseMs: number, limit: number): Promise<OutboxMessage[]> {
  return db.transaction().execute(async (trx) => {
    let due = trx
      .selectFrom('notification_outbox')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      // head of line: while a message of the subscription waits for its retry or is being sent, its other messages
      // wait too (the ones behind a failure were given the same retry time), so they arrive in the order written
      .where('subscription_id', 'not in', (eb) =>
        eb
          .selectFrom('notification_outbox as busy')
          .select('busy.subscription_id')
          .where('busy.status', '=', 'pending')
          .where((b) => b.or([b('busy.next_attempt_at', '>', now), b('busy.locked_until', '>=', now)])),
      )
      .orderBy('id')
      .limit(limit);
    if (dialect === 'postgres') due = due.forUpdate().skipLocked();
    const ids = (await due.execute()).map((row) => row.id);
    if (ids.length === 0) return [];
    const claimed = await trx
      .updateTable('notification_outbox')
      .set({ locked_by: worker, locked_until: now + leaseMs })
      .where('id', 'in', ids)
      // checked again at the row lock: a row another engine leased meanwhile is left to it
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .returningAll()
      .execute();
    // ids are time-ordered: oldest first, so one subscription's messages go in the order they were written
    return claimed.sort((a, b) => (a.id < b.id ? -1 : 1));
  });
}

/** Exponential backoff from 5 s doubling to at most 1 h, with ±20 % jitter so failed receivers are not hit in step. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 3600_000);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Delivered, failed and cancelled messages, with their delivery log, are kept this long. */
export const RETENTION_MS = 30 * 24 * 3600_000;

/** Deletes finished messages (and their attempts) written before `before`; pending ones always stay. */
export async function pruneOutbox(db: Db, before: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const finished = trx.selectFrom('notification_outbox').select('id').where('status', '!=', 'pending').where('created_at', '<', before);
    await trx.deleteFrom('notification_attempts').where('message_id', 'in', finished).execute();
    const result = await trx.deleteFrom('notification_outbox').where('status', '!=', 'pending').where('created_at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}
