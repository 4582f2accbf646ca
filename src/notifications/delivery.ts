// Sends what the outbox holds: lease due messages, sign, send by webhook or email, log the attempt, and either mark
// the message delivered or schedule the next try (exponential backoff within 24 h). At-least-once: a crash between
// sending and recording sends the message again after the lease; receivers de-duplicate by MessageId.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { EngineContext } from '../../kernel/context.js';
import { recordAttempt } from './delivery-log.js';
import { backoffMs, claimDue, onOutboxWrite, pruneOutbox, RETENTION_MS, type MessageKind, type OutboxMessage } from './outbox.js';
import type { Tx } from '../../kernel/store/database.js';
import { organizationSecret, signBody } from './signing.js';
import { getSubscriptionById, markConfirmationSent, pruneOrphanedWorkflowSubscriptions, type Subscription } from './subscription.store.js';
import type { SubscriptionType } from './notification.schema.js';
import type { Transport } from './transport.js';

const BATCH = 20;
/** longer than a send can take (webhook timeout 10 s), so a lease never ends while its claimer still sends */
const LEASE_MS = 60_000;

export interface DispatcherMetrics {
  deliveries: Counter<'type' | 'outcome'>;
  duration: Histogram<'type'>;
}

export function createDispatcherMetrics(ctx: EngineContext): DispatcherMetrics {
  const registers = [ctx.metrics.registry];
  new Gauge({
    name: 'engine_notification_outbox_pending',
    help: 'Notification messages waiting for delivery (all engines sharing the database)',
    registers,
    async collect() {
      // The database away (issue 27): the last count stays, so /metrics still answers during the outage.
      const row = await ctx.store.db.selectFrom('notification_outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending')
        .executeTakeFirst().catch(() => undefined);
      if (row) this.set(Number(row.n ?? 0));
    },
  });
  return {
    deliveries: new Counter({
      name: 'engine_notification_deliveries_total',
      help: 'Notification delivery attempts by subscription type and outcome (delivered, retry, failed, cancelled)',
      labelNames: ['type', 'outcome'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'engine_notification_delivery_seconds',
      help: 'Time one delivery attempt took, by subscription type',
      labelNames: ['type'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
}

export class NotificationDispatcher {
  /** names this engine's leases, so a late finish never overwrites another engine's claim */
  readonly worker = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly ctx: EngineContext,
    private readonly transports: Partial<Record<SubscriptionType, Transport>>,
    private readonly metrics: DispatcherMetrics,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), this.ctx.config.notifyPollMs);
    this.timer.unref();
    this.pruneTimer = setInterval(() => void this.prune(), 3600_000);
    this.pruneTimer.unref();
    void this.prune();
    this.unsubscribe = onOutboxWrite(() => setTimeout(() => this.kick(), 25).unref());
    this.kick();
  }

  /** Runs a pass now (or right after the running one). */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((error: unknown) => this.ctx.logger.error({ err: error, component: 'notifications' }, 'notification delivery pass failed'))
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves when no pass runs (tests wait on it after a kick). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Drops finished messages older than the retention (30 days) with their log, and deleted workflows' subscriptions. */
  async prune(): Promise<number> {
    try {
      const removed = (await pruneOutbox(this.ctx.store.db, this.ctx.clock.nowMs() - RETENTION_MS)) + (await pruneOrphanedWorkflowSubscriptions(this.ctx.store.db));
      if (removed > 0) this.ctx.logger.info({ component: 'notifications', removed }, 'pruned finished notification messages and subscriptions of deleted workflows');
      return removed;
    } catch (error) {
      this.ctx.logger.warn({ err: error, component: 'notifications' }, 'pruning the notification outbox failed');
      return 0;
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.unsubscribe?.();
    await this.idle();
    for (const transport of Object.values(this.transports)) transport?.close?.();
  }

  private async drain(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const batch = await claimDue(this.ctx.store.db, this.ctx.store.dialect, this.worker, this.ctx.clock.nowMs(), LEASE_MS, BATCH);
      const bySubscription = new Map<string, OutboxMessage[]>();
      for (const message of batch) bySubscription.set(message.subscription_id, [...(bySubscription.get(message.subscription_id) ?? []), message]);
      const secrets = new Map<string, Promise<string>>(); // one read per organization and batch
      const secretOf = (organizationId: string) => {
        let secret = secrets.get(organizationId);
        if (!secret) secrets.set(organizationId, (secret = organizationSecret(this.ctx.store.db, this.ctx.vault, organizationId, this.ctx.clock.nowMs())));
        return secret;
      };
      // one subscription's messages go one after the other, in order, and after a failure the rest wait for the
      // same retry; subscriptions go in parallel
      await Promise.all([...bySubscription.entries()].map(async ([subscriptionId, messages]) => {
        const subscription = await getSubscriptionById(this.ctx.store.db, subscriptionId);
        let retryAt: number | undefined;
        for (const message of messages) {
          if (retryAt !== undefined) await this.finish(message, { next_attempt_at: retryAt });
          else retryAt = await this.deliver(message, subscription, secretOf);
        }
      }));
      if (batch.length < BATCH) return;
    }
  }

  /** Sends one message; answers when the subscription's next try is due after a failure, else undefined. */
  private async deliver(message: OutboxMessage, subscription: Subscription | undefined, secretOf: (organizationId: string) => Promise<string>): Promise<number | undefined> {
    // deleted, or (for events) no longer confirmed: nothing may reach the endpoint any more
    if (!subscription || (message.kind === 'Notification' && subscription.status !== 'Confirmed')) {
      await this.finish(message, { status: 'cancelled', last_error: 'the subscription is gone or not confirmed' });
      this.metrics.deliveries.inc({ type: subscription?.type ?? 'unknown', outcome: 'cancelled' });
      return undefined;
    }
    const transport = this.transports[subscription.type];
    const started = performance.now();
    let result = { ok: false, detail: `no ${subscription.type} transport is configured (SMTP_URL)` };
    if (transport) {
      const secret = await secretOf(message.organization_id);
      result = await transport.send({
        id: message.id,
        kind: message.kind as MessageKind,
        subject: message.subject,
        body: message.body,
        signature: signBody(secret, message.body),
        endpoint: subscription.endpoint,
      });
    }
    const durationMs = performance.now() - started;
    this.metrics.duration.observe({ type: subscription.type }, durationMs / 1000);
    const now = this.ctx.clock.nowMs();
    const attempt = Number(message.attempts) + 1;
    const log = { messageId: message.id, subscriptionId: subscription.id, attempt, at: now, detail: result.detail, durationMs };
    const logger = this.ctx.logger.child({ component: 'notifications', messageId: message.id, subscriptionId: subscription.id, attempt });
    if (result.ok) {
      await this.finish(message, { status: 'delivered', delivered_at: now, last_error: null, attempts: attempt }, async (trx) => {
        await recordAttempt(trx, { ...log, outcome: 'delivered' });
        if (message.kind === 'SubscriptionConfirmation') await markConfirmationSent(trx, subscription.id, now);
      });
      this.metrics.deliveries.inc({ type: subscription.type, outcome: 'delivered' });
      logger.info({ event: message.event, detail: result.detail }, 'notification delivered');
      return undefined;
    }
    const next = now + backoffMs(attempt);
    const givingUp = next > Number(message.expires_at);
    await this.finish(message, { ...(givingUp ? { status: 'failed' } : { next_attempt_at: next }), last_error: result.detail, attempts: attempt }, (trx) =>
      recordAttempt(trx, { ...log, outcome: 'failed' }),
    );
    this.metrics.deliveries.inc({ type: subscription.type, outcome: givingUp ? 'failed' : 'retry' });
    logger.warn({ event: message.event, detail: result.detail, nextAttempt: givingUp ? null : new Date(next).toISOString() }, givingUp ? 'notification given up after 24 h' : 'notification delivery failed; will retry');
    return givingUp ? undefined : next;
  }

  /** Releases the lease with the outcome, only while this engine still holds it. */
  private async finish(
    message: OutboxMessage,
    set: { status?: string; next_attempt_at?: number; delivered_at?: number; last_error?: string | null; attempts?: number },
    also?: (trx: Tx) => Promise<void>,
  ): Promise<void> {
    await this.ctx.store.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('notification_outbox')
        .set({ ...set, locked_by: null, locked_until: null })
        .where('id', '=', message.id)
        .where('locked_by', '=', this.worker)
        .execute();
      await also?.(trx);
    });
  }
}
