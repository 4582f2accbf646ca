// Issue 27: what waits on PostgreSQL resumes by itself when it returns. A cluster (api and packager processes) on
// private stores: a notification written just before PostgreSQL stops and a schedule that falls due while it is down
// both go out once it is back; a live channel on the packager keeps serving its playlists through the outage, and
// its packager's writes (heartbeat, metric samples) resume afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyBlueprint } from '../e2e/live/live-helpers.js';
import { WebhookReceiver } from '../api/notifications/receivers.js';
import { variantUrls } from '../ssai/setup.js';
import { until } from '../cluster/cluster.js';
import { alive, request, startOutageCluster, type Answer, type OutageCluster } from './outage-cluster.js';
import { privateStoresMissing } from './private-stores.js';
import type { EngineProcess } from '../helpers/engine-process.js';

const missing = privateStoresMissing();
if (missing) process.stderr.write(`test/faults: skipped: ${missing}\n`);

/** how far ahead of PostgreSQL's stop the schedule falls due: the stop (pg_ctl -m fast) takes well under this */
const DUE_AFTER_MS = 8_000;
/** the media sequence number of a media playlist's last segment (no EXT-X-MEDIA-SEQUENCE tag means 0: RFC 8216 4.4.3.2) */
function lastSegmentNumber(text: string): number {
  const segments = text.split('\n').filter((line) => line.trim() && !line.startsWith('#')).length;
  if (segments === 0) throw new Error(`a media playlist without segments:\n${text}`);
  return Number(/^#EXT-X-MEDIA-SEQUENCE:(\d+)/m.exec(text)?.[1] ?? 0) + segments - 1;
}

/** The log lines a process writes from now on. */
function logsFromNow(p: EngineProcess): () => string[] {
  const from = p.logs.length;
  return () => p.logs.slice(from);
}

describe.skipIf(missing !== undefined)('work waiting on PostgreSQL resumes when it returns (private PostgreSQL)', () => {
  let cluster: OutageCluster;
  const receiver = new WebhookReceiver();
  let organizationId = '';
  /** the live channel running on the packager through the outage, and its first rendition's media playlist */
  let channelId = '';
  let mediaPlaylistUrl = '';

  const api = async (method: string, url: string, body?: unknown): Promise<Answer & { json: any }> => {
    const answer = await request(`${cluster.balancer.url}${url}`, { method, headers: { 'content-type': 'application/json', ...cluster.auth }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    let json: unknown;
    try {
      json = answer.text ? JSON.parse(answer.text) : undefined;
    } catch {
      json = undefined;
    }
    return { ...answer, json };
  };
  const channelStatus = async (id: string): Promise<string | undefined> => {
    const answer = await api('GET', `/channels/${id}`);
    return answer.status === 200 ? (answer.json.channelStatus as string) : undefined;
  };
  const statusNotifications = (workflowId: string, status: string) =>
    receiver.notifications('workflow.status').filter((r) => r.json.Data.workflowId === workflowId && r.json.Data.status === status);
  const everyProcessAlive = () => {
    expect(cluster.all.filter((p) => !alive(p)).map((p) => `${p.name} exited:\n${p.logs.slice(-15).join('\n')}`)).toEqual([]);
    expect(cluster.all.flatMap((p) => p.logs).filter((l) => l.includes('was not handled where it happened'))).toEqual([]);
  };

  beforeAll(async () => {
    await receiver.start();
    cluster = await startOutageCluster({ ssai: 0, workers: 0, packager: true, env: { NOTIFY_HTTP_LOOPBACK: 'true' } });
    [{ id: organizationId }] = (await cluster.postgres.query<{ id: string }>('select id from organizations')) as [{ id: string }];
    const subscribed = await api('POST', `/organizations/${organizationId}/notification-subscriptions`, { endpoint: receiver.url, type: 'https' });
    expect(subscribed.status, subscribed.text).toBe(201);
    const confirmation = await receiver.waitFor('the subscription confirmation', (r) => r.json.Type === 'SubscriptionConfirmation', 30_000);
    expect((await request(confirmation.json.SubscribeURL as string)).status).toBe(200);

    const created = await api('POST', '/workflows', { name: 'Through the outage', blueprint: tinyBlueprint('mp4-loop-test') });
    expect(created.status, created.text).toBe(200);
    channelId = created.json.id as string;
    expect((await api('POST', '/channels', { workflows: [channelId] })).status).toBe(200);
    // the packager makes the blueprint's sample clip first, then starts the channel
    const running = await until('the channel to run on the packager', 180_000, async () => {
      const status = await channelStatus(channelId);
      if (status === 'START_FAILED') throw new Error(`the channel did not start: ${(await api('GET', `/channels/${channelId}`)).text}`);
      return status === 'RUNNING' ? (await api('GET', `/channels/${channelId}`)).json : undefined;
    });
    const multivariantUrl = running.outputs[0].url as string;
    const multivariant = await request(multivariantUrl);
    expect(multivariant.status).toBe(200);
    mediaPlaylistUrl = new URL(variantUrls(multivariant.text)[0]!, multivariantUrl).href;
  }, 300_000);

  afterAll(async () => {
    await cluster?.close();
    await receiver.stop();
  });

  it('delivers a notification written before PostgreSQL stopped, fires a schedule due during the outage, and keeps a live channel serving', async () => {
    // A notification written before the outage that could not go out yet: its receiver is down, so it waits for a retry.
    // Everything written so far is delivered first: a subscription's messages go in order, so one still pending when
    // the receiver stops (the channel's own status, on a loaded machine) would hold this one behind its retries.
    await until('the notifications so far to be delivered', 60_000, async () => {
      const [row] = await cluster.postgres.query<{ n: string }>(`select count(*) as n from notification_outbox where status = 'pending'`);
      return row && Number(row.n) === 0 ? true : undefined;
    });
    await receiver.stop();
    const doomed = await api('POST', '/workflows', { name: 'Deleted before the outage', blueprint: tinyBlueprint('mp4-loop-test') });
    const deletedId = doomed.json.id as string;
    expect((await api('DELETE', `/workflows/${deletedId}`)).status).toBe(200);
    const firstTry = await until('the first delivery attempt to fail and be recorded', 30_000, async () => {
      const [row] = await cluster.postgres.query<{ attempts: number; next_attempt_at: string }>(
        `select attempts, next_attempt_at from notification_outbox where event = 'workflow.status' and body like $1 and locked_by is null`, [`%"workflowId":"${deletedId}"%"DELETED"%`]);
      return row && Number(row.attempts) >= 1 ? row : undefined;
    });
    const retryAt = Number(firstTry.next_attempt_at);

    // A schedule that falls due while PostgreSQL is down.
    const dueAt = Date.now() + DUE_AFTER_MS;
    const scheduled = await api('POST', '/workflows', {
      name: 'Scheduled during the outage', blueprint: tinyBlueprint('mp4-loop-test'), schedule: { startDateTime: new Date(dueAt).toISOString(), duration: 30 },
    });
    expect(scheduled.status, scheduled.text).toBe(200);
    const scheduledId = scheduled.json.id as string;
    const sequenceBefore = lastSegmentNumber((await request(mediaPlaylistUrl)).text);

    const packagerLogs = logsFromNow(cluster.packager!);
    await cluster.postgres.stopServer();
    expect(Date.now(), 'PostgreSQL took longer to stop than the schedule had before it fell due').toBeLessThan(dueAt);
    await receiver.start(); // the receiver is back: from now on only the database keeps the notification from going out

    // The outage lasts until the scheduler and the notification dispatcher have each tried, and failed, after their
    // work fell due, and the channel has made a segment after that; meanwhile its playlist is read through the balancer.
    const dueWork = Math.max(dueAt, retryAt);
    let apiLogs: (() => string[]) | undefined;
    let segmentAtDue: number | undefined;
    let lastAnswer: Answer | undefined;
    await until('the scheduler and the dispatcher to fail a pass after their work fell due, and the channel to make a segment since', 120_000, async () => {
      const answer = await request(mediaPlaylistUrl);
      if (answer.status !== 200) throw new Error(`the live playlist answered ${answer.status} during the outage: ${answer.text}`);
      lastAnswer = answer;
      if (Date.now() <= dueWork) return undefined;
      apiLogs ??= logsFromNow(cluster.api);
      segmentAtDue ??= lastSegmentNumber(answer.text);
      const lines = apiLogs();
      return lines.some((l) => l.includes('"scheduler pass failed"')) && lines.some((l) => l.includes('"notification delivery pass failed"'))
        && lastSegmentNumber(answer.text) > segmentAtDue ? true : undefined;
    });
    expect(lastSegmentNumber(lastAnswer!.text)).toBeGreaterThan(sequenceBefore);
    expect(statusNotifications(deletedId, 'DELETED')).toEqual([]);
    expect((await api('GET', `/workflows/${scheduledId}`)).status).toBe(503);
    // the packager polls for commands 4 times a second: the outage is logged, not every failed poll (once per 30 s)
    const claimFailures = packagerLogs().filter((l) => l.includes('"channel commands could not be claimed"')).length;
    expect(claimFailures).toBeGreaterThanOrEqual(1);
    expect(claimFailures).toBeLessThanOrEqual(5);
    everyProcessAlive();

    await cluster.postgres.startServer();
    const returnedAt = Date.now();
    // The waiting notification goes out, once.
    await receiver.waitFor('the notification written before the outage', (r) => r.json.Type === 'Notification' && r.json.Data?.workflowId === deletedId, 90_000);
    // The schedule that fell due during the outage starts its channel, and that change is notified too.
    await until('the scheduled channel to run', 180_000, async () => {
      const status = await channelStatus(scheduledId);
      if (status === 'START_FAILED') throw new Error(`the scheduled channel did not start: ${(await api('GET', `/channels/${scheduledId}`)).text}`);
      return status === 'RUNNING' ? true : undefined;
    });
    await receiver.waitFor('the RUNNING notification of the scheduled channel', (r) => r.json.Type === 'Notification' && r.json.Data?.workflowId === scheduledId && r.json.Data?.status === 'RUNNING', 60_000);
    expect(statusNotifications(deletedId, 'DELETED')).toHaveLength(1);

    // The packager's own writes resume: its heartbeat, and the channel's metric samples.
    await until('the packager to beat again', 60_000, async () => {
      const rows = await cluster.postgres.query<{ beat_at: string }>('select beat_at from packager_processes');
      return rows.some((r) => Number(r.beat_at) > returnedAt) ? true : undefined;
    });
    await until('a metric sample of the channel taken after PostgreSQL returned', 60_000, async () => {
      const rows = await cluster.postgres.query<{ n: string }>('select count(*) as n from channel_metrics where workflow_id = $1 and at > $2', [channelId, returnedAt]);
      return Number(rows[0]?.n) > 0 ? true : undefined;
    });
    // It still runs there, with nothing reported wrong.
    expect(await channelStatus(channelId)).toBe('RUNNING');
    expect(await cluster.postgres.query(`select message from channel_alarms where workflow_id = $1 and code = 'CHANNEL_FAILED'`, [channelId])).toEqual([]);
    const after = await request(mediaPlaylistUrl);
    expect(after.status).toBe(200);
    expect(lastSegmentNumber(after.text)).toBeGreaterThan(lastSegmentNumber(lastAnswer!.text));
    everyProcessAlive();
  }, 420_000);
});
