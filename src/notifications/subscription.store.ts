// Notification subscriptions of an organization (spec 2.15, 3.5) and of single workflows (spec 6, workflow `subscriptions`).
import { createHash, randomBytes } from 'node:crypto';
import type { Db, Tx } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';
import { enqueueMessage } from './outbox.js';
import type { SubscriptionStatus, SubscriptionType } from './notification.schema.js';

export interface NotificationSubscriptionTable {
  id: string;
  organization_id: string;
  /** null: every event of the organization; set: that workflow's events only */
  workflow_id: string | null;
  type: string;
  endpoint: string;
  status: string;
  /** sha256 of the single-use confirmation token; null once confirmed */
  token_hash: string | null;
  confirmed_at: number | null;
  created_at: number;
  updated_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    notification_subscriptions: NotificationSubscriptionTable;
  }
}

export interface Subscription {
  id: string;
  organizationId: string;
  workflowId: string | null;
  type: SubscriptionType;
  endpoint: string;
  status: SubscriptionStatus;
  confirmedAt: number | null;
  createdAt: number;
}

function toSubscription(row: NotificationSubscriptionTable): Subscription {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workflowId: row.workflow_id,
    type: row.type as SubscriptionType,
    endpoint: row.endpoint,
    status: row.status as SubscriptionStatus,
    confirmedAt: row.confirmed_at === null ? null : Number(row.confirmed_at),
    createdAt: Number(row.created_at),
  };
}

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Builds the SubscribeURL of a subscription from its token (the router knows the public URL). */
export type SubscribeUrl = (subscription: { id: string; organizationId: string }, token: string) => string;

/**
 * Stores a subscription and, unless `confirmed`, its confirmation message carrying SubscribeURL, in the caller's
 * transaction: the confirmation is delivered by the outbox like every other message.
 */
export async function insertSubscription(
  trx: Tx,
  input: { organizationId: string; workflowId: string | null; type: SubscriptionType; endpoint: string; confirmed: boolean; now: number },
  subscribeUrl: SubscribeUrl,
): Promise<Subscription> {
  const id = newId();
  const token = input.confirmed ? undefined : randomBytes(32).toString('base64url');
  const row: NotificationSubscriptionTable = {
    id,
    organization_id: input.organizationId,
    workflow_id: input.workflowId,
    type: input.type,
    endpoint: input.endpoint,
    status: input.confirmed ? 'Confirmed' : 'Pending',
    token_hash: token ? hashToken(token) : null,
    confirmed_at: input.confirmed ? input.now : null,
    created_at: input.now,
    updated_at: input.now,
  };
  await trx.insertInto('notification_subscriptions').values(row).execute();
  if (token) await enqueueConfirmation(trx, { id, organizationId: input.organizationId, workflowId: input.workflowId }, subscribeUrl({ id, organizationId: input.organizationId }, token), input.now);
  return toSubscription(row);
}

async function enqueueConfirmation(trx: Tx, subscription: { id: string; organizationId: string; workflowId: string | null }, url: string, now: number): Promise<void> {
  const scope = subscription.workflowId ? `the events of workflow ${subscription.workflowId}` : 'the events of your organization';
  await enqueueMessage(trx, {
    organizationId: subscription.organizationId,
    subscriptionId: subscription.id,
    kind: 'SubscriptionConfirmation',
    event: 'subscription.confirmation',
    subject: 'Confirm your notification subscription',
    at: now,
    body: (messageId) => ({
      Type: 'SubscriptionConfirmation',
      MessageId: messageId,
      Timestamp: new Date(now).toISOString(),
      SubscriptionId: subscription.id,
      OrganizationId: subscription.organizationId,
      Message: `You were subscribed to ${scope}. Open SubscribeURL to confirm; nothing else is sent until then.`,
      SubscribeURL: url,
    }),
  });
}

/**
 * Sends a new confirmation (the first one was lost, expired after 24 h of failures, or went to a wrong inbox):
 * a new token replaces the old one, whose undelivered confirmations are dropped. Not for Confirmed subscriptions.
 */
export async function renewConfirmation(trx: Tx, subscription: Subscription, now: number, subscribeUrl: SubscribeUrl): Promise<void> {
  const token = randomBytes(32).toString('base64url');
  // outbox rows before the subscription row, the order the dispatcher locks them in (no deadlock on PostgreSQL)
  await trx
    .updateTable('notification_outbox')
    .set({ status: 'cancelled', last_error: 'replaced by a new confirmation' })
    .where('subscription_id', '=', subscription.id)
    .where('kind', '=', 'SubscriptionConfirmation')
    .where('status', '=', 'pending')
    .execute();
  await trx
    .updateTable('notification_subscriptions')
    .set({ status: 'Pending', token_hash: hashToken(token), updated_at: now })
    .where('id', '=', subscription.id)
    .where('status', '!=', 'Confirmed')
    .execute();
  await enqueueConfirmation(trx, subscription, subscribeUrl(subscription, token), now);
}

export async function listSubscriptions(db: Db, organizationId: string): Promise<Subscription[]> {
  const rows = await db.selectFrom('notification_subscriptions').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toSubscription);
}

export async function getSubscription(db: Db | Tx, organizationId: string, id: string): Promise<Subscription | undefined> {
  const row = await db.selectFrom('notification_subscriptions').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return row ? toSubscription(row) : undefined;
}

export async function getSubscriptionById(db: Db | Tx, id: string): Promise<Subscription | undefined> {
  const row = await db.selectFrom('notification_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toSubscription(row) : undefined;
}

/** An organization-wide subscription of that endpoint already exists (one per endpoint and type). */
export async function findOrganizationSubscription(db: Db | Tx, organizationId: string, type: SubscriptionType, endpoint: string): Promise<Subscription | undefined> {
  const row = await db
    .selectFrom('notification_subscriptions')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('workflow_id', 'is', null)
    .where('type', '=', type)
    .where('endpoint', '=', endpoint)
    .executeTakeFirst();
  return row ? toSubscription(row) : undefined;
}

/** Removes a subscription with its messages and their delivery log; nothing more is sent to it. */
export async function deleteSubscriptions(trx: Tx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await trx.deleteFrom('notification_attempts').where('subscription_id', 'in', [...ids]).execute();
  await trx.deleteFrom('notification_outbox').where('subscription_id', 'in', [...ids]).execute();
  await trx.deleteFrom('notification_subscriptions').where('id', 'in', [...ids]).execute();
}

/** Opens a SubscribeURL: true when the token was this subscription's and unused (it is spent now). */
export async function confirmSubscription(db: Db, id: string, token: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('notification_subscriptions')
    .set({ status: 'Confirmed', token_hash: null, confirmed_at: now, updated_at: now })
    .where('id', '=', id)
    .where('token_hash', '=', hashToken(token))
    .where('status', 'in', ['Pending', 'PendingConfirmation'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The confirmation went out: Pending → PendingConfirmation (a subscription confirmed meanwhile stays Confirmed). */
export async function markConfirmationSent(trx: Tx, id: string, now: number): Promise<void> {
  await trx.updateTable('notification_subscriptions').set({ status: 'PendingConfirmation', updated_at: now }).where('id', '=', id).where('status', '=', 'Pending').execute();
}

/** An endpoint that already confirmed for this organization needs no second confirmation for a workflow. */
export async function endpointConfirmed(trx: Tx, organizationId: string, type: SubscriptionType, endpoint: string): Promise<boolean> {
  const row = await trx
    .selectFrom('notification_subscriptions')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('type', '=', type)
    .where('endpoint', '=', endpoint)
    .where('status', '=', 'Confirmed')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Subscriptions of workflows that no longer exist, once nothing is left to send them (the DELETED event went out
 * or gave up): removed with their messages and log.
 */
export async function pruneOrphanedWorkflowSubscriptions(db: Db): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('notification_subscriptions')
      .select('id')
      .where('workflow_id', 'is not', null)
      .where('workflow_id', 'not in', (eb) => eb.selectFrom('workflows').select('workflows.id'))
      .where('id', 'not in', (eb) => eb.selectFrom('notification_outbox').select('notification_outbox.subscription_id').where('notification_outbox.status', '=', 'pending'))
      .execute();
    await deleteSubscriptions(trx, rows.map((row) => row.id));
    return rows.length;
  });
}
