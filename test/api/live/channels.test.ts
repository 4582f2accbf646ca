import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { NO_RUNTIME_REASON } from '../../../src/channels/channel-runtime.service.js';
import { listChannelEvents } from '../../../src/statistics/channel-events.js';
import { DIALECTS, postgresAvailable, startTestEngine, type DialectChoice, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint, live, RuntimeDouble } from './live-helpers.js';
import { LiveRuntime } from '../../../packager/live-runtime.js';

describe.each(DIALECTS)('channels and the workflow state machine on %s', (dialect: DialectChoice) => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  let runtime: RuntimeDouble;
  const clock = new ManualClock('2026-03-02T08:00:00Z');

  let unavailable = false;

  beforeAll(async () => {
    unavailable = dialect === 'postgres' && !(await postgresAvailable());
    if (unavailable) return;
    engine = await startTestEngine({ clock, dialect });
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());
  beforeEach(({ skip }) => {
    if (unavailable) skip();
  });
  afterEach(() => {
    if (engine) delete engine.ctx.services.channelRuntime;
  });

  const useRuntime = () => {
    runtime = new RuntimeDouble();
    engine.ctx.services.channelRuntime = runtime;
    return runtime;
  };
  const workflow = async (blueprintId = 'rtmp-push-abr', extra: Record<string, unknown> = {}) =>
    (await engine.api('POST', '/workflows', { headers: auth, body: { blueprint: catalogBlueprint(blueprintId), name: 'Show', ...extra } })).body.id as string;
  const startChannels = (ids: string[]) => engine.api('POST', '/channels', { headers: auth, body: { workflows: ids } });
  const stopChannels = (ids: string[]) => engine.api('DELETE', '/channels', { headers: auth, body: { workflows: ids } });
  const channel = async (id: string) => (await engine.api('GET', `/channels/${id}`, { headers: auth })).body;
  const settle = () => live(engine).channels.settled();
  const statuses = async (id: string) =>
    (await listChannelEvents(engine.ctx.store.db, { organizationId: engine.defaultOrganizationId, fromMs: 0, toMs: Number.MAX_SAFE_INTEGER }))
      .filter((e) => e.workflowId === id).map((e) => e.status);

  it('runs channels in a default engine: the packager registers its runtime', () => {
    expect(engine.ctx.services.channelRuntime).toBeInstanceOf(LiveRuntime);
  });

  it('fails a start with the reason when no channel runtime is registered, never pretending RUNNING', async () => {
    // an engine without the packager role
    delete engine.ctx.services.channelRuntime;
    const id = await workflow();
    const answer = await startChannels([id]);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ items: [{ workflowId: id }] });
    await settle();
    const detail = await channel(id);
    expect(detail).toMatchObject({ channelStatus: 'START_FAILED', statusReason: NO_RUNTIME_REASON, startedDateTime: null });
    expect(await statuses(id)).toEqual(['CREATED', 'PROVISIONING', 'STARTING', 'START_FAILED']);
    const again = await startChannels([id]);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('WORKFLOW_START_FAILED');
  });

  it('runs READY → PROVISIONING → STARTING → RUNNING → STOPPING → DONE with the four date-times and the archive', async () => {
    useRuntime();
    const id = await workflow('rtmp-push-abr');
    expect((await startChannels([id])).status).toBe(200);
    await settle();
    let detail = await channel(id);
    expect(detail).toMatchObject({
      workflowId: id, channelStatus: 'RUNNING', startRequestedDateTime: '2026-03-02T08:00:00.000Z', startedDateTime: '2026-03-02T08:00:00.000Z',
      stopRequestedDateTime: null, stoppedDateTime: null, archive: { status: 'RECORDING', url: null }, activeInput: 'rtmp-in',
    });
    expect(detail.inputs[0]).toMatchObject({ name: 'rtmp-in', url: expect.stringMatching(/^rtmp:/) });
    expect(detail.outputs[0]).toMatchObject({ destinationId: 'hls-origin', type: 'HLS' });
    expect(runtime.started[0]?.archive).toEqual({ enabled: true, defaultArchiveGroup: true });
    const double = await startChannels([id]);
    expect(double.body.code).toBe('CHANNEL_ALREADY_STARTED');

    clock.advance(60_000);
    const stop = await stopChannels([id]);
    expect(stop.body).toEqual({ items: [{ workflowId: id, status: 'STOPPING' }] });
    await settle();
    detail = await channel(id);
    expect(detail).toMatchObject({ channelStatus: 'DONE', stopRequestedDateTime: '2026-03-02T08:01:00.000Z', stoppedDateTime: '2026-03-02T08:01:00.000Z', archive: { status: 'AVAILABLE', url: 'http://archive.local/a.mp4' } });
    expect((await stopChannels([id])).body.items[0].status).toBe('DONE');
    expect(await statuses(id)).toEqual(['CREATED', 'PROVISIONING', 'STARTING', 'RUNNING', 'STOPPING', 'DONE']);
    const list = await engine.api('GET', '/channels', { headers: auth });
    expect(list.body.items.map((c: { workflowId: string }) => c.workflowId)).toContain(id);
  });

  it('duplicates a DONE workflow and starts the copy', async () => {
    useRuntime();
    const id = await workflow('srt-push', { tags: ['dup'] });
    await startChannels([id]);
    await settle();
    await stopChannels([id]);
    await settle();
    const answer = await startChannels([id]);
    expect(answer.status).toBe(200);
    const [item] = answer.body.items;
    expect(item.sourceWorkflowId).toBe(id);
    expect(item.workflowId).not.toBe(id);
    await settle();
    expect((await channel(item.workflowId)).channelStatus).toBe('RUNNING');
    expect((await channel(id)).channelStatus).toBe('DONE');
    const copy = (await engine.api('GET', `/workflows/${item.workflowId}`, { headers: auth })).body;
    expect(copy).toMatchObject({ sourceWorkflowId: id, tags: ['dup'], name: 'Show' });
  });

  it('rolls back a failed start and records the cause', async () => {
    useRuntime().failStart = 'input port 1935 is taken';
    const id = await workflow();
    await startChannels([id]);
    await settle();
    expect(await channel(id)).toMatchObject({ channelStatus: 'START_FAILED', statusReason: 'input port 1935 is taken' });
    expect(runtime.stopped).toEqual([id]);
  });

  it('records STOP_FAILED with the cause when a stop fails, and a retry stops it', async () => {
    useRuntime();
    const id = await workflow();
    await startChannels([id]);
    await settle();
    runtime.failStop = 'encoder does not answer';
    await stopChannels([id]);
    await settle();
    expect(await channel(id)).toMatchObject({ channelStatus: 'STOP_FAILED', statusReason: 'encoder does not answer' });
    expect((await startChannels([id])).body.code).toBe('WORKFLOW_START_FAILED');
    runtime.failStop = undefined;
    await stopChannels([id]);
    await settle();
    expect((await channel(id)).channelStatus).toBe('DONE');
  });

  it('refuses to stop a never-started workflow and checks every id before changing anything', async () => {
    useRuntime();
    const ready = await workflow();
    const never = await stopChannels([ready]);
    expect(never.status).toBe(409);
    expect(never.body.code).toBe('CHANNEL_NOT_STARTED');
    const missing = await startChannels([ready, 'no-such-workflow']);
    expect(missing.status).toBe(404);
    expect((await channel(ready)).channelStatus).toBe('READY');
    expect((await startChannels([])).body.code).toBe('VALIDATION_FAILED');
    expect((await engine.api('POST', '/channels', { headers: auth, body: {} })).body.code).toBe('VALIDATION_FAILED');
  });

  it('deletes a running workflow by stopping its channel first (DELETING)', async () => {
    useRuntime();
    const id = await workflow();
    await startChannels([id]);
    await settle();
    expect((await engine.api('DELETE', `/workflows/${id}`, { headers: auth })).body).toEqual({ id, status: 'DELETING' });
    await settle();
    expect((await engine.api('GET', `/workflows/${id}`, { headers: auth })).status).toBe(404);
    expect(runtime.stopped).toContain(id);
    expect((await statuses(id)).slice(-2)).toEqual(['DELETING', 'DELETED']);
  });

  it('schedules dynamic ad breaks 15 to 20 s ahead only on a running channel', async () => {
    useRuntime();
    const id = await workflow();
    const early = await engine.api('POST', `/channels/${id}/dynamic-ads`, { headers: auth, body: { duration: 30 } });
    expect(early.body.code).toBe('CHANNEL_NOT_RUNNING');
    await startChannels([id]);
    await settle();
    for (const duration of [0, 601, 1.5]) {
      expect((await engine.api('POST', `/channels/${id}/dynamic-ads`, { headers: auth, body: { duration } })).body.code).toBe('VALIDATION_FAILED');
    }
    const answer = await engine.api('POST', `/channels/${id}/dynamic-ads`, { headers: auth, body: { duration: 30 } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ workflowId: id, duration: 30, spliceEventId: expect.any(Number) });
    const delay = Date.parse(answer.body.startsAt) - clock.nowMs();
    expect(delay).toBeGreaterThanOrEqual(15_000);
    expect(delay).toBeLessThanOrEqual(20_000);
    expect(runtime.adBreaks).toEqual([{ workflowId: id, adBreak: { spliceEventId: answer.body.spliceEventId, startsAt: Date.parse(answer.body.startsAt), duration: 30, requestedAt: clock.nowMs() } }]);
  });

  it('switches between the inputs of a two-input channel', async () => {
    useRuntime();
    const id = await workflow('two-input-switch');
    await startChannels([id]);
    await settle();
    expect((await channel(id)).activeInput).toBe('primary');
    const bad = await engine.api('POST', `/channels/${id}/input-switch`, { headers: auth, body: { input: 'nope' } });
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    const answer = await engine.api('POST', `/channels/${id}/input-switch`, { headers: auth, body: { input: 'backup' } });
    expect(answer.body).toEqual({ workflowId: id, activeInput: 'backup' });
    expect(runtime.switches).toEqual([{ workflowId: id, input: 'backup' }]);
    expect((await channel(id)).activeInput).toBe('backup');
  });

  it('keeps alarms and metric samples the runtime reports', async () => {
    useRuntime();
    const id = await workflow();
    await startChannels([id]);
    await settle();
    const at = clock.nowMs();
    runtime.emit({ type: 'alarm', workflowId: id, code: 'INPUT_LOSS', message: 'no input for 5 s', severity: 'CRITICAL', active: true, at });
    runtime.emit({ type: 'metric', workflowId: id, metric: 'NETWORK_IN', value: 5.5, at: at - 60_000 });
    runtime.emit({ type: 'metric', workflowId: id, metric: 'NETWORK_IN', value: 6, at: at - 30_000 });
    await settle();
    const alarms = await engine.api('GET', `/channels/${id}/alarms`, { headers: auth });
    expect(alarms.body.items).toMatchObject([{ code: 'INPUT_LOSS', active: true, severity: 'CRITICAL' }]);
    runtime.emit({ type: 'alarm', workflowId: id, code: 'INPUT_LOSS', message: '', severity: 'CRITICAL', active: false, at: at + 1000 });
    await settle();
    expect((await engine.api('GET', `/channels/${id}/alarms`, { headers: auth })).body.items).toEqual([]);
    expect((await engine.api('GET', `/channels/${id}/alarms?history=true`, { headers: auth })).body.items).toMatchObject([{ code: 'INPUT_LOSS', active: false }]);
    const graph = await engine.api('GET', `/channels/${id}/graphs?metric=NETWORK_IN`, { headers: auth });
    expect(graph.body).toMatchObject({ metric: 'NETWORK_IN', points: [{ value: 5.5 }, { value: 6 }] });
    expect((await engine.api('GET', `/channels/${id}/graphs?metric=BOGUS`, { headers: auth })).body.code).toBe('VALIDATION_FAILED');
    const long = await engine.api('GET', `/channels/${id}/graphs?metric=FILL_MS&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z`, { headers: auth });
    expect(long.body.code).toBe('RANGE_TOO_LONG');
  });

  it('gives the SSAI playback URL where the blueprint names a destination and a live adinsert', async () => {
    useRuntime();
    const previous = engine.ctx.services.adinsertLookup;
    engine.ctx.services.adinsertLookup = {
      get: async (_org, guid) => (guid === 'ad-guid' ? { id: 'ad-guid', type: 'live', sourceUrl: 'http://origin.local/live/' } : undefined),
    };
    try {
      const blueprint = catalogBlueprint('url-pull-hls-ads') as { settings: { adServers: Array<{ adServerId: string }> } };
      blueprint.settings.adServers[0]!.adServerId = 'ad-guid';
      const id = (await engine.api('POST', '/workflows', { headers: auth, body: { blueprint, name: 'Ads' } })).body.id as string;
      await startChannels([id]);
      await settle();
      const output = (await channel(id)).outputs[0];
      expect(output.ssaiPlaybackUrl).toBe(`${engine.ctx.config.publicUrl}/v1/master/ad-guid/${id}/index.m3u8`);
    } finally {
      if (previous) engine.ctx.services.adinsertLookup = previous;
      else delete engine.ctx.services.adinsertLookup;
    }
  });
});
