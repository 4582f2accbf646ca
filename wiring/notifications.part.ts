// Notifications (issue 16): subscriptions with confirmation, the outbox every state change writes to through
// notify(tx, event), and its delivery by webhook and email. Delivery runs in api and worker processes; engines
// sharing PostgreSQL share the outbox.
import type { EnginePart } from '../kernel/part.js';
import type { EngineContext } from '../kernel/context.js';
import type { SubscriptionType } from '../src/notifications/notification.schema.js';
import { createDispatcherMetrics, NotificationDispatcher } from '../src/notifications/delivery.js';
import { EmailTransport } from '../src/notifications/email.js';
import { notificationRoutes } from '../src/notifications/notification.router.js';
import type { Transport } from '../src/notifications/transport.js';
import { WebhookTransport } from '../src/notifications/webhook.js';

export interface NotificationServices {
  /** absent in processes whose roles do not deliver */
  dispatcher?: NotificationDispatcher;
}

declare module '../kernel/context.js' {
  interface EngineServices {
    notifications?: NotificationServices;
  }
}

function transports(ctx: EngineContext): Partial<Record<SubscriptionType, Transport>> {
  return {
    https: new WebhookTransport(),
    ...(ctx.config.smtpUrl ? { email: new EmailTransport(ctx.config.smtpUrl, ctx.config.smtpFrom) } : {}),
  };
}

export const notificationsPart: EnginePart = {
  name: 'notifications',
  roles: ['api', 'worker'],
  init: (ctx) => {
    const dispatcher = new NotificationDispatcher(ctx, transports(ctx), createDispatcherMetrics(ctx));
    ctx.services.notifications = { dispatcher };
    ctx.onClose(() => dispatcher.close());
  },
  routes: (ctx) => notificationRoutes(ctx),
  // messages left pending by a stop (or another engine) go out right after start
  start: (ctx) => ctx.services.notifications?.dispatcher?.start(),
};
