// Durable delivery: retries with backoff while the receiver is down (nothing lost), giving up after 24 h, messages
// left pending by a stopped engine sent by the next start, email through a real SMTP server.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { verifySignature } from '../../../src/notifications/signing.js';
import { claimDue } from '../../../src/notifications/outbox.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint, live, RuntimeDouble } from '../live/live-helpers.js';
import { SmtpReceiver, WebhookReceiver } from './receivers.js';
import { confirmedWebhook } from './helpers.js';

const HOUR = 3600_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// No packager role: a channel start then fails at once with the documented reason, which gives these tests a
// workflow's whole status sequence (PROVISIONING, STARTING, START_FAILED) without running ffmpeg.
async function engineWith(clock: ManualClock, env: Record<string, string> = {}, dataDir?: string): Promise<TestEngine> {
  const engine = await startTestEngine({ clock, env: { ENGINE_ROLES: 'api,ssai,worker', NOTIFY_HTTP_LOOPBACK: 'true', NOTIFY_POLL_MS: '50', ...env }, ...(dataDir ? { dataDir } : {}) });
  cleanups.push(() => engine.close());
  // channels that fail to start give three status events at once, without running ffmpeg
  const runtime = new RuntimeDouble();
  runtime.failStart = 'the encoder refused the input';
  engine.ctx.services.channelRuntime = runtime;
  return engine;
}
async function receiverOn(port = 0): Promise<WebhookReceiver> {
  const receiver = new WebhookReceiver();
  receiver.port = port;
  await receiver.start();
  cleanups.push(() => receiver.stop());
  return receiver;
}
async function failingStart(engine: TestEngine, auth: Record<string, string>, name: string): Promise<string> {
  const id = (await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint('rtmp-push-abr'), name } })).body.id as string;
  await engine.api('POST', '/channels', { headers: auth, body: { workflows: [id] } });
  await live(engine).channels.settled();
  return id;
}
async function pass(engine: TestEngine): Promise<void> {
  const dispatcher = engine.ctx.services.notifications?.dispatcher;
  await dispatcher?.idle();
  dispatcher?.kick();
  await dispatcher?.idle();
}
const log = async (engine: TestEngine, auth: Record<string, string>, id: string) =>
  (await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/notification-subscriptions/${id}/deliveries`, { headers: auth })).body.data as Array<Record<string, any>>;

describe('durable notification delivery', () => {
  it('keeps retrying with growing delays while the receiver is down and delivers everything once it is back', async () => {
    const clock = new ManualClock('2026-03-02T08:00:00Z');
    const engine = await engineWith(clock);
    const auth = { Authorization: (await engine.login()).IdToken };
    const receiver = await receiverOn();
    const id = await confirmedWebhook(engine, auth, receiver);
    const port = receiver.port;
    await receiver.stop();

    const workflowId = await failingStart(engine, auth, 'While down');
    await pass(engine);
    // oldest first: the first fails, the two behind it wait for the same retry (one subscription's order holds)
    let messages = (await log(engine, auth, id)).filter((m) => m.type === 'Notification').reverse();
    expect(messages.map((m) => m.status)).toEqual(['pending', 'pending', 'pending']);
    expect(messages.map((m) => m.attempts)).toEqual([1, 0, 0]);
    expect(messages[0]!.log).toMatchObject([{ attempt: 1, outcome: 'failed' }]);
    expect(messages[0]!.lastError).toMatch(/fetch failed|ECONNREFUSED/);
    expect(new Set(messages.map((m) => m.nextAttemptDateTime)).size).toBe(1);
    const firstRetry = Date.parse(messages[0]!.nextAttemptDateTime) - clock.nowMs();
    expect(firstRetry).toBeGreaterThanOrEqual(4_000);
    expect(firstRetry).toBeLessThanOrEqual(6_000);

    // still down at the next try: it waits about twice as long as the one before
    clock.advance(10_000);
    await pass(engine);
    messages = (await log(engine, auth, id)).filter((m) => m.type === 'Notification').reverse();
    expect(messages.map((m) => m.attempts)).toEqual([2, 0, 0]);
    const secondRetry = Date.parse(messages[0]!.nextAttemptDateTime) - clock.nowMs();
    expect(secondRetry).toBeGreaterThanOrEqual(8_000);
    expect(secondRetry).toBeLessThanOrEqual(12_000);

    const back = await receiverOn(port);
    clock.advance(HOUR);
    auth.Authorization = (await engine.login()).IdToken;
    await pass(engine);
    const arrived = await back.waitForCount('the three events', (r) => r.json.Data?.workflowId === workflowId, 3);
    expect(arrived.map((r) => r.json.Data.status)).toEqual(['PROVISIONING', 'STARTING', 'START_FAILED']);
    messages = (await log(engine, auth, id)).filter((m) => m.type === 'Notification').reverse();
    expect(messages.map((m) => m.status)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(messages.map((m) => m.log.map((a: { outcome: string }) => a.outcome))).toEqual([['failed', 'failed', 'delivered'], ['delivered'], ['delivered']]);
    expect(new Set(arrived.map((r) => r.json.MessageId)).size).toBe(3);
  });

  it('gives a message up after 24 hours of failures and says so in the delivery log', async () => {
    const clock = new ManualClock('2026-03-02T08:00:00Z');
    const engine = await engineWith(clock);
    const auth = { Authorization: (await engine.login()).IdToken };
    const receiver = await receiverOn();
    const id = await confirmedWebhook(engine, auth, receiver);
    receiver.status = 503;
    await failingStart(engine, auth, 'Never heard');
    await pass(engine);
    for (let hour = 0; hour < 26; hour++) {
      clock.advance(HOUR);
      await pass(engine);
    }
    auth.Authorization = (await engine.login()).IdToken; // the first ID token expired an hour in
    const messages = (await log(engine, auth, id)).filter((m) => m.type === 'Notification').reverse();
    expect(messages.map((m) => m.status)).toEqual(['failed', 'failed', 'failed']);
    for (const message of messages) {
      expect(message.lastError).toBe('HTTP 503');
      expect(message.nextAttemptDateTime).toBeNull();
      const last = Date.parse(message.log.at(-1).at);
      expect(last - Date.parse(message.createdDateTime)).toBeLessThanOrEqual(24 * HOUR);
    }
    // 5 s doubling up to 1 h (±20 %), then hourly; the clock moves by hours here, so one try per step at most
    expect(messages[0]!.attempts).toBeGreaterThan(12);
    expect(messages[0]!.attempts).toBeLessThan(40);
    receiver.status = 200;
    clock.advance(HOUR);
    await pass(engine);
    expect(receiver.notifications()).toEqual([]);
  });

  it('keeps finished messages and their log for 30 days, pending ones until they are sent', async () => {
    const clock = new ManualClock('2026-03-02T08:00:00Z');
    const engine = await engineWith(clock);
    const auth = { Authorization: (await engine.login()).IdToken };
    const receiver = await receiverOn();
    const id = await confirmedWebhook(engine, auth, receiver);
    await failingStart(engine, auth, 'Old news');
    await receiver.waitForCount('three events', (r) => r.json.Type === 'Notification', 3);
    await pass(engine);
    receiver.status = 503;
    clock.advance(29 * 24 * HOUR);
    auth.Authorization = (await engine.login()).IdToken;
    await failingStart(engine, auth, 'Recent and pending');
    await pass(engine);
    const dispatcher = engine.ctx.services.notifications!.dispatcher!;
    expect(await dispatcher.prune()).toBe(0);
    clock.advance(2 * 24 * HOUR);
    expect(await dispatcher.prune()).toBe(4); // the confirmation and the three old events
    auth.Authorization = (await engine.login()).IdToken;
    const left = await log(engine, auth, id);
    expect(left.map((m) => m.subject)).toEqual(expect.arrayContaining([expect.stringContaining('Recent and pending')]));
    expect(left.every((m) => !String(m.subject).includes('Old news'))).toBe(true);
    expect(left).toHaveLength(3);
    const attempts = await engine.ctx.store.db.selectFrom('notification_attempts').select('message_id').execute();
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((a) => left.some((m) => m.messageId === a.message_id))).toBe(true);
  });

  it('sends after the next start what a stopped engine left pending', async () => {
    const clock = new ManualClock('2026-03-02T08:00:00Z');
    const first = await engineWith(clock);
    const auth = { Authorization: (await first.login()).IdToken };
    const receiver = await receiverOn();
    const id = await confirmedWebhook(first, auth, receiver);
    receiver.status = 500;
    const workflowId = await failingStart(first, auth, 'Across restarts');
    await pass(first);
    expect((await log(first, auth, id)).filter((m) => m.type === 'Notification' && m.status === 'pending')).toHaveLength(3);
    await first.close();

    receiver.status = 200;
    clock.advance(60_000);
    const second = await engineWith(clock, {}, first.dataDir);
    const arrived = await receiver.waitForCount('the pending events', (r) => r.json.Data?.workflowId === workflowId, 3);
    expect(arrived.map((r) => r.json.Data.status)).toEqual(['PROVISIONING', 'STARTING', 'START_FAILED']);
    const secret = (await second.api('GET', `/organizations/${second.defaultOrganizationId}/notification-secret`, { headers: { Authorization: (await second.login()).IdToken } })).body.data.secret;
    for (const request of arrived) expect(verifySignature(secret, request.body, request.headers['x-engine-signature'] as string)).toBe(true);
  });

  it('sends what an engine leased and never finished (it died mid-send) once the lease has run out', async () => {
    const clock = new ManualClock('2026-03-02T08:00:00Z');
    const engine = await engineWith(clock);
    const auth = { Authorization: (await engine.login()).IdToken };
    const receiver = await receiverOn();
    await confirmedWebhook(engine, auth, receiver);
    await engine.ctx.services.notifications?.dispatcher?.close(); // this engine stops sending, like a dead one
    const workflowId = await failingStart(engine, auth, 'Orphaned');
    const leased = await claimDue(engine.ctx.store.db, engine.ctx.store.dialect, 'engine-that-died', clock.nowMs(), 60_000, 10);
    expect(leased).toHaveLength(3);

    const next = await engineWith(clock, {}, engine.dataDir);
    await pass(next);
    expect(receiver.notifications()).toEqual([]); // still leased: the dead engine might be sending
    clock.advance(61_000);
    await pass(next);
    const arrived = await receiver.waitForCount('the orphaned events', (r) => r.json.Data?.workflowId === workflowId, 3);
    expect(arrived.map((r) => r.json.Data.status)).toEqual(['PROVISIONING', 'STARTING', 'START_FAILED']);
  });

  it('delivers the confirmation and the events by email through SMTP_URL', async () => {
    const smtp = new SmtpReceiver();
    await smtp.start();
    cleanups.push(() => smtp.stop());
    const clock = new ManualClock('2026-03-02T08:00:00Z');
    const engine = await engineWith(clock, { SMTP_URL: smtp.url, SMTP_FROM: 'engine@example.test' });
    const auth = { Authorization: (await engine.login()).IdToken };
    const address = `ops-${randomBytes(3).toString('hex')}@example.test`;
    const created = await engine.api('POST', `/organizations/${engine.defaultOrganizationId}/notification-subscriptions`, { headers: auth, body: { endpoint: address, type: 'email' } });
    expect(created.status).toBe(201);
    const confirmation = await smtp.waitFor('the confirmation email', (m) => m.to.includes(address));
    expect(confirmation.headers.subject).toBe('Confirm your notification subscription');
    expect(confirmation.headers['x-engine-message-type']).toBe('SubscriptionConfirmation');
    const link = /Confirm: (\S+)/.exec(confirmation.text)?.[1];
    expect(link).toMatch(/\/confirm\?token=/);
    expect((await fetch(link!)).status).toBe(200);

    const workflowId = await failingStart(engine, auth, 'Mailed');
    const mail = await smtp.waitFor('START_FAILED by email', (m) => m.text.includes('START_FAILED') && m.text.includes(workflowId));
    expect(mail.headers.from).toContain('engine@example.test');
    expect(mail.headers.subject).toMatch(/^Workflow Mailed is START_FAILED/);
    const json = mail.text.trim().split(/\r?\n/).at(-1)!;
    expect(JSON.parse(json)).toMatchObject({ Type: 'Notification', Event: 'workflow.status', Data: { workflowId, status: 'START_FAILED' } });
    const secret = (await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/notification-secret`, { headers: auth })).body.data.secret;
    expect(verifySignature(secret, json, mail.headers['x-engine-signature'])).toBe(true);
    expect(mail.headers['x-engine-message-id']).toBe(JSON.parse(json).MessageId);
  });
});
