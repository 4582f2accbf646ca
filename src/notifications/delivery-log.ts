// The delivery log of a subscription (issue 16): each message with its status and every attempt made to send it.
import type { Db, Tx } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';

export interface NotificationAttemptTable {
  id: string;
  message_id: string;
  subscription_id: string;
  attempt: number;
  at: number;
  /** delivered | failed */
  outcome: string;
  /** HTTP status or the transport's error, short */
  detail: string | null;
  duration_ms: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    notification_attempts: NotificationAttemptTable;
  }
}

export async function recordAttempt(
  trx: Tx,
  attempt: { messageId: string; subscriptionId: string; attempt: number; at: number; outcome: 'delivered' | 'failed'; detail: string; durationMs: number },
): Promise<void> {
  await trx
    .insertInto('notification_attempts')
    .values({
      id: newId(),
      message_id: attempt.messageId,
      subscription_id: attempt.subscriptionId,
      attempt: attempt.attempt,
      at: attempt.at,
      outcome: attempt.outcome,
      detail: attempt.detail.slice(0, 500),
      duration_ms: Math.max(0, Math.round(attempt.durationMs)),
    })
    .execute();
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(Number(ms)).toISOString());

/** Newest messages first, each with its attempts in order. */
export async function deliveryLog(db: Db, subscriptionId: string, limit: number) {
  const messages = await db
    .selectFrom('notification_outbox')
    .select(['id', 'kind', 'event', 'subject', 'status', 'attempts', 'next_attempt_at', 'expires_at', 'last_error', 'delivered_at', 'created_at'])
    .where('subscription_id', '=', subscriptionId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  const ids = messages.map((message) => message.id);
  const attempts = ids.length
    ? await db.selectFrom('notification_attempts').selectAll().where('message_id', 'in', ids).orderBy('attempt').execute()
    : [];
  return messages.map((message) => ({
    messageId: message.id,
    type: message.kind,
    event: message.event,
    subject: message.subject,
    status: message.status,
    attempts: Number(message.attempts),
    createdDateTime: iso(message.created_at),
    nextAttemptDateTime: message.status === 'pending' ? iso(message.next_attempt_at) : null,
    expiresDateTime: iso(message.expires_at),
    deliveredDateTime: iso(message.delivered_at),
    lastError: message.last_error,
    log: attempts
      .filter((attempt) => attempt.message_id === message.id)
      .map((attempt) => ({ attempt: Number(attempt.attempt), at: iso(attempt.at), outcome: attempt.outcome, detail: attempt.detail, durationMs: Number(attempt.duration_ms) })),
  }));
}
