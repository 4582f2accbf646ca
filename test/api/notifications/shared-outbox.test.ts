// Several engines on one PostgreSQL database share the outbox: every message is sent, none twice (issue 16, point 4).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { notify } from '../../../src/notifications/outbox.js';
import { workflowStatusEvent } from '../../../src/notifications/events.js';
import { postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { WebhookReceiver } from './receivers.js';
import { closeAndDropSchema, confirmedWebhook } from './helpers.js';

describe('two engines on PostgreSQL sharing the outbox', () => {
  let engines: TestEngine[] = [];
  let receiver: WebhookReceiver;
  let unavailable = false;

  beforeAll(async () => {
    unavailable = !(await postgresAvailable());
    if (unavailable) return;
    receiver = await new WebhookReceiver().start();
    const schema = `t_${randomBytes(6).toString('hex')}`;
    // same database schema and the same secret key: two instances of one installation
    const env = { NOTIFY_HTTP_LOOPBACK: 'true', NOTIFY_POLL_MS: '20', ENGINE_SECRET_KEY: randomBytes(32).toString('base64'), ENGINE_ROLES: 'api' };
    const first = await startTestEngine({ dialect: 'postgres', schema, env });
    const second = await startTestEngine({ dialect: 'postgres', schema, env });
    engines = [first, second];
  });
  afterAll(async () => {
    await closeAndDropSchema(...engines);
    await receiver?.stop();
  });
  beforeEach(({ skip }) => {
    if (unavailable) skip();
  });

  it('delivers each of 3 × 60 messages exactly once while both engines send', async () => {
    const [first, second] = engines as [TestEngine, TestEngine];
    expect(second.defaultOrganizationId).toBe(first.defaultOrganizationId);
    const auth = { Authorization: (await first.login()).IdToken };
    // three subscriptions (one receiver, three URLs): engines work on different subscriptions at once
    for (const path of ['a', 'b', 'c']) await confirmedWebhook(first, auth, receiver, `${receiver.url}?to=${path}`);
    receiver.delayMs = 15; // slow enough that both engines find due messages while the other sends
    const organizationId = first.defaultOrganizationId;
    const now = Date.now();
    await first.ctx.store.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 60; i++) {
        await notify(trx, workflowStatusEvent({ organizationId, workflowId: `wf-${i}`, name: `Load ${i}`, status: 'RUNNING', reason: null, at: now }));
      }
    });
    await receiver.waitForCount('180 messages', (r) => r.json.Type === 'Notification', 180, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a duplicate would arrive now
    const ids = receiver.notifications().map((r) => r.json.MessageId as string);
    expect(ids).toHaveLength(180);
    expect(new Set(ids).size).toBe(180);
    for (const subscription of new Set(receiver.notifications().map((r) => r.json.SubscriptionId as string))) {
      const workflows = receiver.notifications().filter((r) => r.json.SubscriptionId === subscription).map((r) => r.json.Data.workflowId as string);
      expect(new Set(workflows).size).toBe(60);
    }
    const sentBy = await Promise.all(engines.map(async (engine) => {
      const metric = await engine.ctx.metrics.registry.getSingleMetric('engine_notification_deliveries_total')?.get();
      return metric?.values.filter((v) => v.labels.outcome === 'delivered').reduce((sum, v) => sum + v.value, 0) ?? 0;
    }));
    expect(sentBy[0]! + sentBy[1]!).toBe(183); // three confirmations and 180 event messages
    expect(sentBy[0]).toBeGreaterThan(0);
    expect(sentBy[1]).toBeGreaterThan(0);
  }, 60_000);
});
