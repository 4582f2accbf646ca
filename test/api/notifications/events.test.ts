// Every event kind reaches a confirmed webhook, emitted where the change is written (issue 16; docs/notifications.md).
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint, live, RuntimeDouble } from '../live/live-helpers.js';
import { apiKey, createMeta, uploadPlain, waitForStatus } from '../vod/helpers.js';
import { WebhookReceiver } from './receivers.js';
import { confirmedWebhook } from './helpers.js';

describe('notification events', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  let receiver: WebhookReceiver;
  let runtime: RuntimeDouble;
  const clock = new ManualClock('2026-03-02T08:00:00Z');

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    engine = await startTestEngine({ clock, env: { NOTIFY_HTTP_LOOPBACK: 'true', NOTIFY_POLL_MS: '50' } });
    auth = { Authorization: (await engine.login()).IdToken };
    runtime = new RuntimeDouble();
    engine.ctx.services.channelRuntime = runtime;
    await confirmedWebhook(engine, auth, receiver);
  });
  afterAll(async () => {
    await engine?.close();
    await receiver?.stop();
  });

  const workflow = async (name: string, extra: Record<string, unknown> = {}) => {
    const created = await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint('rtmp-push-abr'), name, ...extra } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.id as string;
  };
  const start = async (id: string) => {
    expect((await engine.api('POST', '/channels', { headers: auth, body: { workflows: [id] } })).status).toBe(200);
    await live(engine).channels.settled();
  };
  const stop = async (id: string) => {
    expect((await engine.api('DELETE', '/channels', { headers: auth, body: { workflows: [id] } })).status).toBe(200);
    await live(engine).channels.settled();
  };
  const ofWorkflow = (id: string, event: string) => (r: { json: Record<string, any> }) => r.json.Event === event && r.json.Data.workflowId === id;

  it('reports a channel run: statuses to RUNNING, alarms raised and cleared, the stop and the archive ready', async () => {
    const id = await workflow('Run');
    await start(id);
    runtime.emit({ type: 'alarm', workflowId: id, code: 'INPUT_LOSS', message: 'no input for 5 s', severity: 'CRITICAL', active: true, at: clock.nowMs() });
    const raised = await receiver.waitFor('alarm raised', ofWorkflow(id, 'channel.alarm.raised'));
    expect(raised.json.Data.alarm).toMatchObject({ code: 'INPUT_LOSS', message: 'no input for 5 s', severity: 'CRITICAL', active: true });
    clock.advance(10_000);
    runtime.emit({ type: 'alarm', workflowId: id, code: 'INPUT_LOSS', message: 'input back', severity: 'CRITICAL', active: false, at: clock.nowMs() });
    const cleared = await receiver.waitFor('alarm cleared', ofWorkflow(id, 'channel.alarm.cleared'));
    expect(cleared.json.Data.alarm).toMatchObject({ id: raised.json.Data.alarm.id, code: 'INPUT_LOSS', active: false, clearedDateTime: '2026-03-02T08:00:10.000Z' });
    // an alarm still active when the channel stops is cleared by the stop, and reported so
    runtime.emit({ type: 'alarm', workflowId: id, code: 'DROPPED_FRAMES', message: 'frames dropped', severity: 'WARNING', active: true, at: clock.nowMs() });
    await receiver.waitFor('second alarm', (r) => ofWorkflow(id, 'channel.alarm.raised')(r) && r.json.Data.alarm.code === 'DROPPED_FRAMES');
    await stop(id);
    const archive = await receiver.waitFor('archive ready', ofWorkflow(id, 'channel.archive.ready'));
    expect(archive.json.Data).toMatchObject({ workflowId: id, name: 'Run', archive: { status: 'AVAILABLE', url: 'http://archive.local/a.mp4' } });
    await receiver.waitFor('dropped frames cleared', (r) => ofWorkflow(id, 'channel.alarm.cleared')(r) && r.json.Data.alarm.code === 'DROPPED_FRAMES');
    const statuses = (await receiver.waitForCount('five statuses', ofWorkflow(id, 'workflow.status'), 5)).map((r) => r.json.Data.status);
    expect(statuses).toEqual(['PROVISIONING', 'STARTING', 'RUNNING', 'STOPPING', 'DONE']);
  });

  it('reports START_FAILED and STOP_FAILED with their reasons, and DELETED', async () => {
    runtime.failStart = 'the encoder refused the ladder';
    const failing = await workflow('Bad start');
    await start(failing);
    runtime.failStart = undefined;
    const startFailed = await receiver.waitFor('START_FAILED', (r) => ofWorkflow(failing, 'workflow.status')(r) && r.json.Data.status === 'START_FAILED');
    expect(startFailed.json.Data.statusReason).toBe('the encoder refused the ladder');
    expect(startFailed.json.Subject).toBe('Workflow Bad start is START_FAILED: the encoder refused the ladder');

    const stubborn = await workflow('Bad stop');
    await start(stubborn);
    runtime.failStop = 'the archive disk is full';
    await stop(stubborn);
    runtime.failStop = undefined;
    const stopFailed = await receiver.waitFor('STOP_FAILED', (r) => ofWorkflow(stubborn, 'workflow.status')(r) && r.json.Data.status === 'STOP_FAILED');
    expect(stopFailed.json.Data.statusReason).toBe('the archive disk is full');

    expect((await engine.api('DELETE', `/workflows/${failing}`, { headers: auth })).status).toBe(200);
    await receiver.waitFor('DELETED', (r) => ofWorkflow(failing, 'workflow.status')(r) && r.json.Data.status === 'DELETED');
  });

  it("delivers a workflow's events to its own subscriptions after their confirmation, and only that workflow's", async () => {
    const own = await new WebhookReceiver().start();
    try {
      const id = await workflow('Own subscribers', { subscriptions: [{ protocol: 'http', endpoint: own.url }] });
      const other = await workflow('Someone else');
      const confirmation = await own.waitFor('the confirmation', (r) => r.json.Type === 'SubscriptionConfirmation');
      expect(confirmation.json.Message).toContain(id);
      const list = (await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/notification-subscriptions`, { headers: auth })).body.data;
      expect(list.find((s: { workflowId: string | null }) => s.workflowId === id)).toMatchObject({ endpoint: own.url, status: 'PendingConfirmation' });
      expect((await fetch(confirmation.json.SubscribeURL as string)).status).toBe(200);
      await start(id);
      await start(other);
      await receiver.waitFor('the other RUNNING at the organization endpoint', (r) => ofWorkflow(other, 'workflow.status')(r) && r.json.Data.status === 'RUNNING');
      const statuses = (await own.waitForCount('own statuses', (r) => r.json.Event === 'workflow.status', 3)).map((r) => r.json.Data);
      expect(statuses.map((d) => d.status)).toEqual(['PROVISIONING', 'STARTING', 'RUNNING']);
      expect(own.notifications().every((r) => r.json.Data.workflowId === id)).toBe(true);

      // a refused entry names itself; the workflow is not written
      const bad = await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint('rtmp-push-abr'), name: 'Bad', subscriptions: [{ protocol: 'sqs', endpoint: 'arn:x' }] } });
      expect(bad.status).toBe(400);
      expect(bad.body.fields).toEqual([{ field: 'subscriptions.0.protocol', message: 'must be https or email' }]);
    } finally {
      await own.stop();
    }
  });

  it("follows a workflow's subscriptions through PUT and removes them once the workflow is deleted and told so", async () => {
    const [a, b] = [await new WebhookReceiver().start(), await new WebhookReceiver().start()];
    const subscriptionsOf = async (workflowId: string) =>
      ((await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/notification-subscriptions`, { headers: auth })).body.data as Array<{ workflowId: string | null; endpoint: string; status: string }>)
        .filter((s) => s.workflowId === workflowId);
    try {
      const id = await workflow('Changing hands', { subscriptions: [{ protocol: 'http', endpoint: a.url }] });
      await a.waitFor('A confirmation', (r) => r.json.Type === 'SubscriptionConfirmation');
      const put = await engine.api('PUT', `/workflows/${id}`, { headers: auth, body: { blueprint: catalogBlueprint('rtmp-push-abr'), name: 'Changing hands', subscriptions: [{ protocol: 'http', endpoint: b.url }] } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      expect((await subscriptionsOf(id)).map((s) => s.endpoint)).toEqual([b.url]);
      const confirmation = await b.waitFor('B confirmation', (r) => r.json.Type === 'SubscriptionConfirmation');
      expect((await fetch(confirmation.json.SubscribeURL as string)).status).toBe(200);
      await start(id);
      await stop(id);
      expect((await engine.api('DELETE', `/workflows/${id}`, { headers: auth })).status).toBe(200);
      const statuses = (await b.waitForCount('B statuses', (r) => r.json.Event === 'workflow.status', 6)).map((r) => r.json.Data.status);
      expect(statuses).toEqual(['PROVISIONING', 'STARTING', 'RUNNING', 'STOPPING', 'DONE', 'DELETED']);
      expect(a.notifications()).toEqual([]);
      await engine.ctx.services.notifications?.dispatcher?.idle();
      await engine.ctx.services.notifications?.dispatcher?.prune();
      expect(await subscriptionsOf(id)).toEqual([]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('writes no message when the change it reports is rolled back, and the message when it commits', async () => {
    const id = await workflow('Rolled back');
    const workflows = live(engine).workflows;
    const messages = () => engine.ctx.store.db.selectFrom('notification_outbox').select('body').where('event', '=', 'workflow.status').execute()
      .then((rows) => rows.filter((r) => (JSON.parse(r.body) as { Data: { workflowId: string } }).Data.workflowId === id));
    await expect(engine.ctx.store.db.transaction().execute(async (trx) => {
      expect(await workflows.transition({ id, organizationId: engine.defaultOrganizationId }, ['READY'], 'PROVISIONING', clock.nowMs(), {}, trx)).toBe(true);
      throw new Error('the rest of the change failed');
    })).rejects.toThrow('the rest of the change failed');
    expect(await messages()).toHaveLength(0);
    expect((await workflows.get(engine.defaultOrganizationId, id))?.status).toBe('READY');
    await engine.ctx.store.db.transaction().execute((trx) => workflows.transition({ id, organizationId: engine.defaultOrganizationId }, ['READY'], 'PROVISIONING', clock.nowMs(), {}, trx));
    expect(await messages()).toHaveLength(1);
  });

  it('sends one message per event to an endpoint subscribed both for the organization and for the workflow', async () => {
    const before = receiver.received.length;
    const id = await workflow('Twice subscribed', { subscriptions: [{ protocol: 'http', endpoint: receiver.url }] });
    const list = (await engine.api('GET', `/organizations/${engine.defaultOrganizationId}/notification-subscriptions`, { headers: auth })).body.data;
    // the organization already confirmed this endpoint: no second confirmation
    expect(list.find((s: { workflowId: string | null }) => s.workflowId === id)).toMatchObject({ endpoint: receiver.url, status: 'Confirmed' });
    await start(id);
    await receiver.waitFor('RUNNING', (r) => ofWorkflow(id, 'workflow.status')(r) && r.json.Data.status === 'RUNNING');
    const dispatcher = engine.ctx.services.notifications?.dispatcher;
    dispatcher?.kick();
    await dispatcher?.idle();
    const since = receiver.received.slice(before);
    expect(since.filter((r) => r.json.Type === 'SubscriptionConfirmation')).toEqual([]);
    expect(since.filter(ofWorkflow(id, 'workflow.status')).map((r) => r.json.Data.status)).toEqual(['PROVISIONING', 'STARTING', 'RUNNING']);
  });

  it('reports VOD encodes that complete or fail, and captions when they are done', async () => {
    const key = await apiKey(engine);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'notify-vod-'));
    const text = path.join(dir, 'notes.mp4');
    writeFileSync(text, 'this is not a video');
    const broken = await createMeta(engine, key, { title: 'Broken' });
    await uploadPlain(engine, key, broken, text);
    const failed = await receiver.waitFor('encode failed', (r) => r.json.Event === 'vod.encode.failed' && r.json.Data.guid === broken, 60_000);
    expect(failed.json.Data).toMatchObject({ title: 'Broken', status: 'error' });
    expect(failed.json.Data.statusReason).toBeTruthy();

    const clip = await generateMedia('clip', path.join(dir, 'clip.mp4'), { seconds: 2, size: '160x90' });
    const good = await createMeta(engine, key, { title: 'Tiny' });
    expect((await uploadPlain(engine, key, good, clip)).status).toBe(200);
    const info = await waitForStatus(engine, good, ['complete', 'error']);
    expect(info.status).toBe('complete');
    const complete = await receiver.waitFor('encode complete', (r) => r.json.Event === 'vod.encode.complete' && r.json.Data.guid === good);
    expect(complete.json.Data).toMatchObject({ title: 'Tiny', status: 'complete' });
    expect(complete.json.Data.hls).toMatch(/\.m3u8$/);

    // Speech recognition of a tone finds nothing or fails (without pocketsphinx): either way its end is reported.
    expect((await engine.api('POST', `/broker/vod/encode/audio/${good}`, { headers: auth })).status).toBe(200);
    const captions = await receiver.waitFor('captions done', (r) => String(r.json.Event).startsWith('vod.captions.') && r.json.Data.guid === good, 60_000);
    const state = (await engine.api('GET', `/broker/vod/list/${good}/info`)).body.data.captions;
    expect(captions.json.Event).toBe(state.status === 'complete' ? 'vod.captions.complete' : 'vod.captions.failed');
    expect(captions.json.Data.captions.status).toBe(state.status);
  }, 120_000);
});
