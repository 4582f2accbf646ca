// Subscription bodies (spec 2.15, 4.1) and the catalogue of notification events (issue 16; docs/notifications.md lists them).
import { z } from 'zod';

export const SUBSCRIPTION_TYPES = ['https', 'email'] as const;
export type SubscriptionType = (typeof SUBSCRIPTION_TYPES)[number];

/** Spec 3.5: Pending at creation, PendingConfirmation once the SubscribeURL went out, Confirmed once it was opened. */
export const SUBSCRIPTION_STATUSES = ['Pending', 'PendingConfirmation', 'Confirmed'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** Every event a subscription can receive; `Event` in a notification body. */
export const EVENT_TYPES = [
  'workflow.status',
  'channel.alarm.raised',
  'channel.alarm.cleared',
  'channel.archive.ready',
  'vod.encode.complete',
  'vod.encode.failed',
  'vod.captions.complete',
  'vod.captions.failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** What a state change reports; notify() turns it into one outbox message per subscriber. */
export interface NotificationEvent {
  type: EventType;
  organizationId: string;
  /** set for workflow and channel events: that workflow's own subscriptions receive them too */
  workflowId?: string;
  /** epoch ms of the change */
  at: number;
  /** one line for humans (email subject) */
  subject: string;
  data: Record<string, unknown>;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why an endpoint is refused, or undefined when it is fine for the type. */
export function endpointProblem(type: SubscriptionType, endpoint: string, allowHttpLoopback: boolean): string | undefined {
  if (type === 'email') return z.email().safeParse(endpoint).success ? undefined : 'must be an email address';
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'must be an https:// URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  const loopback = LOOPBACK_HOSTS.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol === 'http:' && loopback && allowHttpLoopback) return undefined;
  return url.protocol === 'http:' && loopback ? 'must be https:// (http:// on loopback needs NOTIFY_HTTP_LOOPBACK=true)' : 'must be an https:// URL';
}

export const createSubscriptionBody = z.strictObject({
  endpoint: z.string().trim().min(1).max(2048).describe('an https:// URL (type https) or an email address (type email)'),
  type: z.enum(SUBSCRIPTION_TYPES),
});

export const subscriptionParams = z.object({ guid: z.string().min(1).max(64), id: z.string().min(1).max(64) });
export const confirmQuery = z.object({ token: z.string().min(16).max(256) });
export const deliveryLogQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) });
