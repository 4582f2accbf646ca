// Spec 4.1 subscription operations under /organizations/{guid}/notification-subscriptions (DESIGN.md), the open
// SubscribeURL, the delivery log and the organization's signing secret.
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound } from '../../kernel/core/errors.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { assertOwnOrganization, organizationParams } from '../organizations/organization.router.js';
import { deliveryLog } from './delivery-log.js';
import { confirmQuery, createSubscriptionBody, deliveryLogQuery, endpointProblem, subscriptionParams, type SubscriptionType } from './notification.schema.js';
import { organizationSecret, rotateOrganizationSecret, SIGNATURE_HEADER } from './signing.js';
import {
  confirmSubscription,
  deleteSubscriptions,
  findOrganizationSubscription,
  getSubscription,
  insertSubscription,
  listSubscriptions,
  renewConfirmation,
  type SubscribeUrl,
  type Subscription,
} from './subscription.store.js';

export function subscriptionView(subscription: Subscription) {
  return {
    guid: subscription.id,
    endpoint: subscription.endpoint,
    type: subscription.type,
    status: subscription.status,
    workflowId: subscription.workflowId,
    created: new Date(subscription.createdAt).toISOString(),
    confirmed: subscription.confirmedAt === null ? null : new Date(subscription.confirmedAt).toISOString(),
  };
}

export function subscribeUrlFor(ctx: EngineContext): SubscribeUrl {
  return (subscription, token) =>
    `${ctx.config.publicUrl}/organizations/${encodeURIComponent(subscription.organizationId)}/notification-subscriptions/${encodeURIComponent(subscription.id)}/confirm?token=${encodeURIComponent(token)}`;
}

/** Refuses an endpoint the type cannot reach, and email without SMTP_URL (the message could never leave). */
export function assertDeliverable(ctx: EngineContext, type: SubscriptionType, endpoint: string, field: string): void {
  const problem = endpointProblem(type, endpoint, ctx.config.notifyHttpLoopback);
  if (problem) throw engineError('VALIDATION_FAILED', `${field} ${problem}`, { fields: [{ field, message: problem }] });
  if (type === 'email' && !ctx.config.smtpUrl) {
    throw engineError('EMAIL_NOT_CONFIGURED', `${field}: email subscriptions need SMTP_URL on the engine; subscribe a webhook (type https) or ask the operator to set SMTP_URL`);
  }
}

const secretView = (secret: string) => ({ secret, algorithm: 'HMAC-SHA256', header: SIGNATURE_HEADER, format: 'sha256=<hex of HMAC-SHA256(secret, raw body)>' });

export function notificationRoutes(ctx: EngineContext): RouteSpec[] {
  const db = ctx.store.db;
  const owned = async (orgId: string, id: string) => {
    const subscription = await getSubscription(db, orgId, id);
    if (!subscription) throw notFound('notification subscription', id);
    return subscription;
  };
  return [
    route({
      method: 'post', path: '/organizations/:guid/notification-subscriptions', tag: 'notifications',
      summary: 'Store a notification subscription (Pending); a confirmation with SubscribeURL is sent to the endpoint',
      params: organizationParams, body: createSubscriptionBody, successStatus: 201,
      handler: async ({ params, principal, body }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const endpoint = body.type === 'email' ? body.endpoint.toLowerCase() : body.endpoint;
        assertDeliverable(ctx, body.type, endpoint, 'endpoint');
        const exists = () => engineError('ALREADY_EXISTS', `${endpoint} is already subscribed (${body.type})`);
        if (await findOrganizationSubscription(db, orgId, body.type, endpoint)) throw exists();
        const subscription = await db.transaction().execute(async (trx) => {
          if (await findOrganizationSubscription(trx, orgId, body.type, endpoint)) throw exists();
          return insertSubscription(trx, { organizationId: orgId, workflowId: null, type: body.type, endpoint, confirmed: false, now: ctx.clock.nowMs() }, subscribeUrlFor(ctx));
        });
        ctx.logger.info({ component: 'notifications', subscriptionId: subscription.id, type: subscription.type }, 'notification subscription stored; confirmation queued');
        return { status: true, data: 'Item was created successfully', guid: subscription.id, subscription: subscriptionView(subscription) };
      },
    }),
    route({
      method: 'get', path: '/organizations/:guid/notification-subscriptions', tag: 'notifications',
      summary: "List the organization's notification subscriptions (workflow subscriptions carry their workflowId)",
      params: organizationParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        return { status: true, data: (await listSubscriptions(db, orgId)).map(subscriptionView) };
      },
    }),
    route({
      method: 'get', path: '/organizations/:guid/notification-subscriptions/:id', tag: 'notifications',
      summary: 'Read one notification subscription', params: subscriptionParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        return { status: true, data: subscriptionView(await owned(orgId, params.id)) };
      },
    }),
    route({
      method: 'delete', path: '/organizations/:guid/notification-subscriptions/:id', tag: 'notifications',
      summary: 'Delete a subscription; its undelivered messages are dropped', params: subscriptionParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const subscription = await owned(orgId, params.id);
        await db.transaction().execute((trx) => deleteSubscriptions(trx, [subscription.id]));
        return { status: true, data: 'Item was deleted successfully' };
      },
    }),
    route({
      method: 'post', path: '/organizations/:guid/notification-subscriptions/:id/confirmation', tag: 'notifications',
      summary: 'Send a new confirmation with a new SubscribeURL (the old link stops working); refused once Confirmed', params: subscriptionParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const subscription = await owned(orgId, params.id);
        if (subscription.status === 'Confirmed') throw engineError('CONFLICT', `subscription ${subscription.id} is already Confirmed`);
        if (subscription.type === 'email') assertDeliverable(ctx, subscription.type, subscription.endpoint, 'endpoint');
        await db.transaction().execute((trx) => renewConfirmation(trx, subscription, ctx.clock.nowMs(), subscribeUrlFor(ctx)));
        return { status: true, data: 'Confirmation sent', guid: subscription.id };
      },
    }),
    route({
      method: 'get', path: '/organizations/:guid/notification-subscriptions/:id/deliveries', tag: 'notifications',
      summary: 'Delivery log: newest messages first, each with its status and every attempt', params: subscriptionParams, query: deliveryLogQuery,
      handler: async ({ params, principal, query }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        const subscription = await owned(orgId, params.id);
        return { status: true, data: await deliveryLog(db, subscription.id, query.limit) };
      },
    }),
    route({
      method: 'get', path: '/organizations/:guid/notification-subscriptions/:id/confirm', tag: 'notifications', auth: 'none',
      summary: 'SubscribeURL: confirms the subscription with its single-use token (no credentials: the token is the proof)',
      params: subscriptionParams, query: confirmQuery,
      handler: async ({ params, query }) => {
        if (!(await confirmSubscription(db, params.id, query.token, ctx.clock.nowMs()))) {
          throw engineError('CONFIRMATION_TOKEN_INVALID', 'this confirmation link is unknown or was already used');
        }
        ctx.logger.info({ component: 'notifications', subscriptionId: params.id }, 'notification subscription confirmed');
        return { status: true, data: 'Subscription confirmed', guid: params.id };
      },
    }),
    route({
      method: 'get', path: '/organizations/:guid/notification-secret', tag: 'notifications', permission: 'admin',
      summary: 'The secret that signs every notification of the organization (HMAC-SHA256 of the body)', params: organizationParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        return { status: true, data: secretView(await organizationSecret(db, ctx.vault, orgId, ctx.clock.nowMs())) };
      },
    }),
    route({
      method: 'post', path: '/organizations/:guid/notification-secret', tag: 'notifications', permission: 'admin',
      summary: 'Rotate the signing secret; retries of older messages are signed with the new one', params: organizationParams,
      handler: async ({ params, principal }) => {
        const orgId = assertOwnOrganization(principal, params.guid);
        return { status: true, data: secretView(await rotateOrganizationSecret(db, ctx.vault, orgId, ctx.clock.nowMs())) };
      },
    }),
  ];
}
