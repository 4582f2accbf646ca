import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { verifySignature } from '../../../src/notifications/signing.js';
import { DIALECTS, postgresAvailable, startTestEngine, type DialectChoice, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint, live, RuntimeDouble } from '../live/live-helpers.js';
import { WebhookReceiver } from './receivers.js';
import { closeAndDropSchema } from './helpers.js';

describe.each(DIALECTS)('notification subscriptions with confirmation on %s', (dialect: DialectChoice) => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  let receiver: WebhookReceiver;
  let unavailable = false;
  const clock = new ManualClock('2026-03-02T08:00:00Z');
  const START_FAILURE = 'the encoder refused the input';

  beforeAll(async () => {
    unavailable = dialect === 'postgres' && !(await postgresAvailable());
    if (unavailable) return;
    receiver = await new WebhookReceiver().start();
    // No packager role: the start fails at once with the documented reason (no ffmpeg needed for these events).
    engine = await startTestEngine({ clock, dialect, env: { ENGINE_ROLES: 'api,ssai,worker', NOTIFY_HTTP_LOOPBACK: 'true', NOTIFY_POLL_MS: '50' } });
    auth = { Authorization: (await engine.login()).IdToken };
    // channels that fail to start give three status events at once, without running ffmpeg
    const runtime = new RuntimeDouble();
    runtime.failStart = START_FAILURE;
    engine.ctx.services.channelRuntime = runtime;
  });
  afterAll(async () => {
    await closeAndDropSchema(engine);
    await receiver?.stop();
  });
  beforeEach(({ skip }) => {
    if (unavailable) skip();
  });

  const base = () => `/organizations/${engine.defaultOrganizationId}`;
  const subscribe = (body: unknown) => engine.api('POST', `${base()}/notification-subscriptions`, { headers: auth, body });
  const subscription = async (id: string) => (await engine.api('GET', `${base()}/notification-subscriptions/${id}`, { headers: auth })).body.data;
  const startFailingWorkflow = async (name: string) => {
    const id = (await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint('rtmp-push-abr'), name } })).body.id as string;
    expect((await engine.api('POST', '/channels', { headers: auth, body: { workflows: [id] } })).status).toBe(200);
    await live(engine).channels.settled();
    return id;
  };
  const drained = async () => {
    engine.ctx.services.notifications?.dispatcher?.kick();
    await engine.ctx.services.notifications?.dispatcher?.idle();
  };

  it('confirms through the single-use SubscribeURL, sends nothing else before, then delivers signed workflow events', async () => {
    const created = await subscribe({ endpoint: receiver.url, type: 'https' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: true, data: 'Item was created successfully', subscription: { status: 'Pending', type: 'https', endpoint: receiver.url } });
    const id = created.body.guid as string;

    const confirmation = await receiver.waitFor('the confirmation', (r) => r.json.Type === 'SubscriptionConfirmation');
    expect(confirmation.headers['x-engine-message-type']).toBe('SubscriptionConfirmation');
    expect(confirmation.headers['x-engine-message-id']).toBe(confirmation.json.MessageId);
    expect(confirmation.json.SubscriptionId).toBe(id);
    expect(confirmation.json.SubscribeURL).toMatch(new RegExp(`/notification-subscriptions/${id}/confirm\\?token=`));
    await expect.poll(async () => (await subscription(id)).status).toBe('PendingConfirmation');

    // Events while PendingConfirmation never reach the endpoint (spec 3.5).
    const early = await startFailingWorkflow('Before confirmation');
    await drained();
    expect(receiver.notifications()).toEqual([]);
    const earlyLog = (await engine.api('GET', `${base()}/notification-subscriptions/${id}/deliveries`, { headers: auth })).body.data;
    expect(earlyLog.map((m: { type: string }) => m.type)).toEqual(['SubscriptionConfirmation']);
    expect(earlyLog[0]).toMatchObject({ status: 'delivered', attempts: 1, log: [{ attempt: 1, outcome: 'delivered', detail: 'HTTP 200' }] });

    const opened = await fetch(confirmation.json.SubscribeURL as string);
    expect(opened.status).toBe(200);
    expect(await opened.json()).toMatchObject({ status: true, data: 'Subscription confirmed', guid: id });
    expect((await subscription(id)).status).toBe('Confirmed');
    const reused = await fetch(confirmation.json.SubscribeURL as string);
    expect(reused.status).toBe(404);
    expect((await reused.json()).code).toBe('CONFIRMATION_TOKEN_INVALID');

    const workflowId = await startFailingWorkflow('After confirmation');
    const events = await receiver.waitForCount('three status events', (r) => r.json.Event === 'workflow.status' && r.json.Data.workflowId === workflowId, 3);
    expect(events.map((r) => r.json.Data.status)).toEqual(['PROVISIONING', 'STARTING', 'START_FAILED']);
    expect(events[2]?.json).toMatchObject({
      Type: 'Notification', SubscriptionId: id, OrganizationId: engine.defaultOrganizationId,
      Data: { workflowId, name: 'After confirmation', status: 'START_FAILED', statusReason: START_FAILURE },
    });
    expect(receiver.notifications().some((r) => r.json.Data.workflowId === early)).toBe(false);
    expect(new Set(receiver.received.map((r) => r.json.MessageId)).size).toBe(receiver.received.length);

    // Signature: HMAC-SHA256 of the raw body with the organization's secret; any change to the body breaks it.
    const secret = (await engine.api('GET', `${base()}/notification-secret`, { headers: auth })).body.data.secret as string;
    for (const request of receiver.received) expect(verifySignature(secret, request.body, request.headers['x-engine-signature'] as string)).toBe(true);
    const failed = events[2]!;
    expect(verifySignature(secret, failed.body.replace('START_FAILED', 'RUNNING'), failed.headers['x-engine-signature'] as string)).toBe(false);
    expect(verifySignature('whsec_other', failed.body, failed.headers['x-engine-signature'] as string)).toBe(false);

    const metrics = await (await fetch(`${engine.url}/metrics`)).text();
    expect(metrics).toMatch(/engine_notification_deliveries_total\{type="https",outcome="delivered"\} [1-9]/);
    expect(metrics).toMatch(/engine_notification_outbox_pending \d+/);
  });

  it('refuses endpoints it may not reach, email without SMTP_URL, duplicates and other organizations', async () => {
    const plainHttp = await subscribe({ endpoint: 'http://example.com/hook', type: 'https' });
    expect(plainHttp.status).toBe(400);
    expect(plainHttp.body).toMatchObject({ code: 'VALIDATION_FAILED', fields: [{ field: 'endpoint' }] });
    const badEmail = await subscribe({ endpoint: 'not-an-address', type: 'email' });
    expect(badEmail.status).toBe(400);
    const noSmtp = await subscribe({ endpoint: 'ops@example.com', type: 'email' });
    expect(noSmtp.status).toBe(409);
    expect(noSmtp.body.code).toBe('EMAIL_NOT_CONFIGURED');
    expect(noSmtp.body.description).toContain('SMTP_URL');
    const badType = await subscribe({ endpoint: receiver.url, type: 'sms' });
    expect(badType.status).toBe(400);
    expect(badType.body.fields[0].field).toBe('type');
    const duplicate = await subscribe({ endpoint: receiver.url, type: 'https' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.code).toBe('ALREADY_EXISTS');
    const other = await engine.api('GET', '/organizations/another-org/notification-subscriptions', { headers: auth });
    expect(other.status).toBe(404);
    const list = (await engine.api('GET', `${base()}/notification-subscriptions`, { headers: auth })).body.data;
    expect(list).toHaveLength(1);
  });

  it('sends a new confirmation on request: the old link stops working, the new one confirms', async () => {
    const second = await new WebhookReceiver().start();
    try {
      const id = (await subscribe({ endpoint: second.url, type: 'https' })).body.guid as string;
      const first = await second.waitFor('the first confirmation', (r) => r.json.Type === 'SubscriptionConfirmation');
      const renewed = await engine.api('POST', `${base()}/notification-subscriptions/${id}/confirmation`, { headers: auth });
      expect(renewed.body, JSON.stringify(renewed.body)).toEqual({ status: true, data: 'Confirmation sent', guid: id });
      const again = await second.waitFor('the second confirmation', (r) => r.json.Type === 'SubscriptionConfirmation' && r.json.MessageId !== first.json.MessageId);
      expect(again.json.SubscribeURL).not.toBe(first.json.SubscribeURL);
      expect((await fetch(first.json.SubscribeURL as string)).status).toBe(404);
      expect((await fetch(again.json.SubscribeURL as string)).status).toBe(200);
      expect((await subscription(id)).status).toBe('Confirmed');
      const refused = await engine.api('POST', `${base()}/notification-subscriptions/${id}/confirmation`, { headers: auth });
      expect(refused.status).toBe(409);
      await engine.api('DELETE', `${base()}/notification-subscriptions/${id}`, { headers: auth });
    } finally {
      await second.stop();
    }
  });

  it('deletes a subscription with its pending messages: nothing more reaches the endpoint', async () => {
    const [existing] = (await engine.api('GET', `${base()}/notification-subscriptions`, { headers: auth })).body.data;
    const deleted = await engine.api('DELETE', `${base()}/notification-subscriptions/${existing.guid}`, { headers: auth });
    expect(deleted.body).toEqual({ status: true, data: 'Item was deleted successfully' });
    const before = receiver.received.length;
    await startFailingWorkflow('After delete');
    await drained();
    expect(receiver.received.length).toBe(before);
    expect((await engine.api('GET', `${base()}/notification-subscriptions/${existing.guid}`, { headers: auth })).status).toBe(404);
  });
});
