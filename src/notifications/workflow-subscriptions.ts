// A workflow's own `subscriptions` (spec 2.2, 6) become subscriptions scoped to that workflow: they receive its
// workflow and channel events, after the same confirmation, unless the endpoint already confirmed for the organization.
import type { EngineContext } from '../../kernel/context.js';
import { engineError, type FieldProblem } from '../../kernel/core/errors.js';
import type { Tx } from '../../kernel/store/database.js';
import { endpointProblem, type SubscriptionType } from './notification.schema.js';
import { subscribeUrlFor } from './notification.router.js';
import { deleteSubscriptions, endpointConfirmed, insertSubscription } from './subscription.store.js';

// SNS-style protocol names a workflow may carry; http is the loopback form of https (NOTIFY_HTTP_LOOPBACK).
const PROTOCOLS: Record<string, SubscriptionType> = { https: 'https', http: 'https', email: 'email' };

interface Target {
  type: SubscriptionType;
  endpoint: string;
}

/** The deliverable targets of a workflow's subscriptions; 400 naming the entry for anything that cannot be delivered. */
export function workflowTargets(ctx: EngineContext, subscriptions: readonly unknown[]): Target[] {
  const problems: FieldProblem[] = [];
  const targets: Target[] = [];
  subscriptions.forEach((entry, index) => {
    const { protocol, endpoint } = (entry ?? {}) as { protocol?: unknown; endpoint?: unknown };
    const type = typeof protocol === 'string' ? PROTOCOLS[protocol.toLowerCase()] : undefined;
    if (!type) return problems.push({ field: `subscriptions.${index}.protocol`, message: 'must be https or email' });
    if (typeof endpoint !== 'string' || endpoint.trim() === '') return problems.push({ field: `subscriptions.${index}.endpoint`, message: 'is required' });
    const value = type === 'email' ? endpoint.trim().toLowerCase() : endpoint.trim();
    const problem = endpointProblem(type, value, ctx.config.notifyHttpLoopback);
    if (problem) return problems.push({ field: `subscriptions.${index}.endpoint`, message: problem });
    if (!targets.some((t) => t.type === type && t.endpoint === value)) targets.push({ type, endpoint: value });
  });
  const [first] = problems;
  if (first) throw engineError('VALIDATION_FAILED', `${first.field} ${first.message}`, { fields: problems });
  if (targets.some((t) => t.type === 'email') && !ctx.config.smtpUrl) {
    throw engineError('EMAIL_NOT_CONFIGURED', 'subscriptions: email subscriptions need SMTP_URL on the engine; use protocol https or ask the operator to set SMTP_URL');
  }
  return targets;
}

/** Makes the workflow's subscription rows match its `subscriptions`, in the transaction that writes the workflow. */
export async function syncWorkflowSubscriptions(
  ctx: EngineContext,
  trx: Tx,
  workflow: { id: string; organizationId: string; subscriptions: readonly unknown[] },
): Promise<void> {
  const targets = workflowTargets(ctx, workflow.subscriptions);
  const existing = await trx.selectFrom('notification_subscriptions').select(['id', 'type', 'endpoint']).where('workflow_id', '=', workflow.id).execute();
  const kept = (row: { type: string; endpoint: string }) => targets.some((t) => t.type === row.type && t.endpoint === row.endpoint);
  await deleteSubscriptions(trx, existing.filter((row) => !kept(row)).map((row) => row.id));
  const now = ctx.clock.nowMs();
  for (const target of targets) {
    if (existing.some((row) => row.type === target.type && row.endpoint === target.endpoint)) continue;
    const confirmed = await endpointConfirmed(trx, workflow.organizationId, target.type, target.endpoint);
    await insertSubscription(trx, { organizationId: workflow.organizationId, workflowId: workflow.id, ...target, confirmed, now }, subscribeUrlFor(ctx));
  }
}
