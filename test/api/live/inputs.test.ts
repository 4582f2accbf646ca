import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../kernel/core/clock.js';
import { DIALECTS, postgresAvailable, startTestEngine, type TestEngine } from '../../helpers/engine.js';

const postgres = await postgresAvailable();

/**
 * Puts a workflow row that uses `inputId` into the workflows part's table. Before that part exists the
 * table is created here with the columns inputs read; afterwards its own NOT NULL columns get filler values.
 */
async function putWorkflow(engine: TestEngine, row: { id: string; status: string; inputId: string }): Promise<void> {
  const db = engine.ctx.store.db;
  const tables = await db.introspection.getTables();
  let table = tables.find((t) => t.name === 'workflows');
  if (!table) {
    await sql`create table workflows (id text primary key, organization_id text not null, status text not null, name text not null, blueprint text not null)`.execute(db);
    table = (await db.introspection.getTables()).find((t) => t.name === 'workflows');
  }
  const values: Record<string, unknown> = {
    id: row.id,
    organization_id: engine.defaultOrganizationId,
    status: row.status,
    name: `wf ${row.id}`,
    blueprint: JSON.stringify({ name: 'bp', components: { encoder: { input: { type: 'SRT_PUSH', managedInputId: row.inputId }, channel: {} } } }),
  };
  for (const column of table?.columns ?? []) {
    if (column.name in values || column.isNullable || column.hasDefaultValue) continue;
    values[column.name] = /int|numeric|double|real/i.test(column.dataType) ? 0 : column.name === 'created' ? new Date(0).toISOString() : '{}';
  }
  const names = Object.keys(values);
  await sql`insert into workflows (${sql.join(names.map((name) => sql.ref(name)))}) values (${sql.join(names.map((name) => values[name]))})`.execute(db);
}

async function setWorkflowStatus(engine: TestEngine, id: string, status: string): Promise<void> {
  await sql`update workflows set status = ${status} where id = ${id}`.execute(engine.ctx.store.db);
}

describe.each(DIALECTS)('managed inputs and devices on %s', (dialect) => {
  const skip = dialect === 'postgres' && !postgres;
  const clock = new ManualClock('2026-03-02T10:00:00Z');
  let engine: TestEngine;
  let auth: Record<string, string>;
  const api = (method: string, url: string, body?: unknown) => engine.api(method, url, { headers: auth, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    if (skip) return;
    engine = await startTestEngine({ dialect, clock, env: { ENGINE_REGIONS: 'local,eu-west', PUBLIC_URL: 'http://media.example.test:8080' } });
    auth = { Authorization: (await engine.login()).IdToken };
  });
  afterAll(async () => engine?.close());

  async function inputCount(): Promise<number> {
    return (await api('GET', '/inputs')).body.items.length;
  }

  it.skipIf(skip)('creates an SRT push input in the default region with an address kept across reads', async () => {
    const created = await api('POST', '/inputs', { name: 'Studio A', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', cidrs: ['203.0.113.0/24', '198.51.100.7/32'] });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'Studio A', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', region: 'local', status: 'DETACHED', cidrs: ['203.0.113.0/24', '198.51.100.7/32'] });
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.ingest.url).toMatch(/^srt:\/\/media\.example\.test:\d+\?passphrase=[0-9a-f]{32}$/);
    const detail = await api('GET', `/inputs/${created.body.id}`);
    expect(detail.body.ingest).toEqual(created.body.ingest);
    expect(detail.body.workflows).toEqual([]);
    const list = await api('GET', '/inputs');
    expect(list.body.items.find((i: { id: string }) => i.id === created.body.id).ingest).toEqual(created.body.ingest);
    // A second SRT input gets another port.
    const second = await api('POST', '/inputs', { name: 'Studio B', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH' });
    expect(second.body.ingest.port).not.toBe(created.body.ingest.port);
    expect(second.body.cidrs).toEqual(['0.0.0.0/0']);
  });

  it.skipIf(skip)('allocates an RTMP stream key and keeps a pull password secret', async () => {
    const rtmp = await api('POST', '/inputs', { name: 'Encoder', type: 'VIRTUAL_INPUT', protocol: 'RTMP_PUSH', region: 'eu-west', cidrs: ['10.0.0.0/8', '192.168.0.0/16'] });
    expect(rtmp.status).toBe(200);
    expect(rtmp.body.ingest.url).toBe(`rtmp://media.example.test:1935/live/${rtmp.body.ingest.streamKey}`);
    const pull = await api('POST', '/inputs', { name: 'Origin', type: 'VIRTUAL_INPUT', protocol: 'URL_PULL', url: 'https://origin.example.test/live.m3u8', username: 'ann', password: 's3cret-pass' });
    expect(pull.status).toBe(200);
    expect(pull.body.source).toEqual({ url: 'https://origin.example.test/live.m3u8', username: 'ann', passwordSet: true });
    expect(pull.body.ingest).toBeUndefined();
    const detail = await api('GET', `/inputs/${pull.body.id}`);
    expect(JSON.stringify(detail.body)).not.toContain('s3cret-pass');
    // The runtime that pulls the source gets the password through the service, never through the API.
    const source = await engine.ctx.services.managedInputs?.get(engine.defaultOrganizationId, pull.body.id);
    expect(source?.password).toBe('s3cret-pass');
    expect(await engine.ctx.services.managedInputs?.get('another-org', pull.body.id)).toBeUndefined();
    const unprotected = await api('POST', '/inputs', { name: 'Open origin', type: 'VIRTUAL_INPUT', protocol: 'RTMP_PULL', url: 'rtmp://origin.example.test/app/stream' });
    expect(unprotected.body.source).toEqual({ url: 'rtmp://origin.example.test/app/stream', username: null, passwordSet: false });
  });

  it.skipIf(skip)('refuses each bad input with a 4xx and its code, creating nothing', async () => {
    const before = await inputCount();
    const bad: Array<[unknown, number, string, string]> = [
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', cidrs: ['300.1.1.1/24'] }, 400, 'VALIDATION_FAILED', 'cidrs.0'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', cidrs: ['10.0.0.1'] }, 400, 'VALIDATION_FAILED', 'cidrs.0'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'RIST', region: 'eu-west', cidrs: ['10.0.0.0/8', '11.0.0.0/8'] }, 400, 'VALIDATION_FAILED', 'cidrs'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'RTP_FEC', region: 'eu-west', cidrs: ['10.0.0.0/8', '11.0.0.0/8'] }, 400, 'VALIDATION_FAILED', 'cidrs'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', region: 'mars-1' }, 400, 'VALIDATION_FAILED', 'region'],
      [{ name: 'x', type: 'VIRTUAL_INPUT' }, 400, 'VALIDATION_FAILED', 'protocol'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'FTP' }, 400, 'VALIDATION_FAILED', 'protocol'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'URL_PULL' }, 400, 'VALIDATION_FAILED', 'url'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'URL_PULL', url: 'rtmp://a.test/x' }, 400, 'VALIDATION_FAILED', 'url'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'URL_PULL', url: 'https://a.test/x', password: 'p' }, 400, 'VALIDATION_FAILED', 'username'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'URL_PULL', url: 'https://a.test/x', cidrs: ['10.0.0.0/8'] }, 400, 'VALIDATION_FAILED', 'cidrs'],
      [{ name: 'x', type: 'VIRTUAL_INPUT', protocol: 'RTMP_PUSH', url: 'https://a.test/x' }, 400, 'VALIDATION_FAILED', 'url'],
      [{ name: 'x', type: 'CONNECTED_DEVICE' }, 400, 'VALIDATION_FAILED', 'deviceId'],
      [{ name: 'x', type: 'CONNECTED_DEVICE', deviceId: 'never-seen' }, 400, 'VALIDATION_FAILED', 'deviceId'],
      [{ name: '', type: 'VIRTUAL_INPUT', protocol: 'MP4', url: 'https://a.test/f.mp4' }, 400, 'VALIDATION_FAILED', 'name'],
    ];
    for (const [body, status, code, field] of bad) {
      const answer = await api('POST', '/inputs', body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.code).toBe(code);
      expect(answer.body.fields.map((f: { field: string }) => f.field), JSON.stringify(body)).toContain(field);
    }
    // one CIDR in a non-default region is fine; several are fine in the default region
    expect((await api('POST', '/inputs', { name: 'one', type: 'VIRTUAL_INPUT', protocol: 'RTP', region: 'eu-west', cidrs: ['10.0.0.0/8'] })).status).toBe(200);
    expect((await api('POST', '/inputs', { name: 'two', type: 'VIRTUAL_INPUT', protocol: 'RTP', cidrs: ['10.0.0.0/8', '2001:db8::/32'] })).status).toBe(200);
    expect(await inputCount()).toBe(before + 2);
  });

  it.skipIf(skip)('reports devices through the heartbeat and tells online from offline with the clock', async () => {
    const beat = await api('POST', '/devices/enc-001/heartbeat', { name: 'Field encoder', settings: { bitrate: 6000, resolution: '1080p' }, settingsVersion: 3 });
    expect(beat.status).toBe(200);
    expect(beat.body).toMatchObject({ id: 'enc-001', name: 'Field encoder', connectivity: { online: true }, settingsSync: { state: 'IN_SYNC', reportedVersion: 3 } });
    let devices = await api('GET', '/devices');
    let device = devices.body.items.find((d: { id: string }) => d.id === 'enc-001');
    expect(device).toMatchObject({ settings: { bitrate: 6000, resolution: '1080p' }, connectivity: { online: true, lastSeenAt: '2026-03-02T10:00:00.000Z' } });
    expect(device.managedInputId).toBeUndefined();
    clock.advance(59_000);
    expect((await api('GET', '/devices')).body.items[0].connectivity.online).toBe(true);
    clock.advance(1_000);
    devices = await api('GET', '/devices');
    device = devices.body.items.find((d: { id: string }) => d.id === 'enc-001');
    expect(device.connectivity.online).toBe(false);
    await api('POST', '/devices/enc-001/heartbeat', {});
    expect((await api('GET', '/devices')).body.items[0].connectivity.online).toBe(true);
    // A device without a settings version is UNKNOWN; a bad id and a bad body are refused.
    expect((await api('POST', '/devices/enc-002/heartbeat', { name: 'Spare' })).body.settingsSync.state).toBe('UNKNOWN');
    expect((await api('POST', '/devices/bad%2Fid/heartbeat', {})).status).toBe(400);
    expect((await api('POST', '/devices/enc-003/heartbeat', { settingsVersion: -1 })).body.code).toBe('VALIDATION_FAILED');
    expect((await engine.api('POST', '/devices/enc-004/heartbeat', { body: {} })).status).toBe(401);
    // Device firmware reports with a live API key, as well as with an ID token.
    const key = await api('POST', '/api-keys', { name: 'device firmware' });
    const byKey = await engine.api('POST', '/devices/enc-005/heartbeat', { headers: { 'X-Api-Key': key.body.value }, body: { name: 'Keyed' } });
    expect(byKey.status).toBe(200);
    expect(byKey.body.connectivity.online).toBe(true);
  });

  it.skipIf(skip)('gives a device one managed input whose detail shows every device setting', async () => {
    await api('POST', '/devices/enc-010/heartbeat', { name: 'Van', settings: { bitrate: 4000, audio: { channels: 2 } }, settingsVersion: 1 });
    const created = await api('POST', '/inputs', { name: 'Van input', type: 'CONNECTED_DEVICE', deviceId: 'enc-010' });
    expect(created.status).toBe(200);
    expect(created.body.ingest.url).toMatch(/^srt:\/\//);
    const before = await inputCount();
    const second = await api('POST', '/inputs', { name: 'Van input 2', type: 'CONNECTED_DEVICE', deviceId: 'enc-010' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('DEVICE_HAS_INPUT');
    expect(await inputCount()).toBe(before);
    const detail = await api('GET', `/inputs/${created.body.id}`);
    expect(detail.body.device).toMatchObject({ id: 'enc-010', name: 'Van', managedInputId: created.body.id, settings: { bitrate: 4000, audio: { channels: 2 } } });
    const devices = await api('GET', '/devices');
    expect(devices.body.items.find((d: { id: string }) => d.id === 'enc-010').managedInputId).toBe(created.body.id);
  });

  it.skipIf(skip)('follows the workflows using an input: status, pending list, edit rule of 3.4 and delete refusal', async () => {
    const input = (await api('POST', '/inputs', { name: 'Main feed', type: 'VIRTUAL_INPUT', protocol: 'SRT_PUSH', region: 'eu-west', cidrs: ['10.0.0.0/8'] })).body;
    const address = input.ingest;
    // DETACHED: spec 3.4 read literally forbids edits ("only when neither ATTACHED nor DETACHED").
    let edit = await api('PUT', `/inputs/${input.id}`, { name: 'Renamed' });
    expect(edit.status).toBe(409);
    expect(edit.body.code).toBe('INPUT_NOT_EDITABLE');

    const wf = `wf-${dialect}-1`;
    await putWorkflow(engine, { id: wf, status: 'READY', inputId: input.id });
    let detail = (await api('GET', `/inputs/${input.id}`)).body;
    expect(detail.status).toBe('ATTACHED');
    expect(detail.workflows).toEqual([{ id: wf, name: `wf ${wf}`, status: 'READY' }]);
    edit = await api('PUT', `/inputs/${input.id}`, { name: 'Renamed' });
    expect(edit.body.code).toBe('INPUT_NOT_EDITABLE');

    await setWorkflowStatus(engine, wf, 'RUNNING');
    detail = (await api('GET', `/inputs/${input.id}`)).body;
    expect(detail.status).toBe('ACTIVE');
    // ACTIVE: editable; the rules still hold (one CIDR in a non-default region) and nothing changes on refusal.
    const refused = await api('PUT', `/inputs/${input.id}`, { cidrs: ['10.0.0.0/8', '11.0.0.0/8'] });
    expect(refused.status).toBe(400);
    expect((await api('PUT', `/inputs/${input.id}`, { region: 'local' })).status).toBe(400);
    expect((await api('GET', `/inputs/${input.id}`)).body.cidrs).toEqual(['10.0.0.0/8']);
    edit = await api('PUT', `/inputs/${input.id}`, { name: 'Renamed', cidrs: ['192.0.2.0/24'] });
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({ name: 'Renamed', cidrs: ['192.0.2.0/24'], ingest: address });
    const del = await api('DELETE', `/inputs/${input.id}`);
    expect(del.status).toBe(409);
    expect(del.body.code).toBe('INPUT_IN_USE');

    await setWorkflowStatus(engine, wf, 'STOP_FAILED');
    detail = (await api('GET', `/inputs/${input.id}`)).body;
    expect(detail.status).toBe('LOCKED');
    expect(detail.workflows).toEqual([]);

    // The channel stopped: the input keeps its address and can be deleted.
    await setWorkflowStatus(engine, wf, 'DONE');
    detail = (await api('GET', `/inputs/${input.id}`)).body;
    expect(detail).toMatchObject({ status: 'DETACHED', workflows: [], ingest: address });
    expect((await api('DELETE', `/inputs/${input.id}`)).body).toEqual({ id: input.id, deleted: true });
    expect((await api('GET', `/inputs/${input.id}`)).status).toBe(404);
  });

  it.skipIf(skip)('pushes device settings through an editable device input and reports them PENDING until the device confirms', async () => {
    await api('POST', '/devices/enc-020/heartbeat', { name: 'Truck', settings: { bitrate: 3000 }, settingsVersion: 4 });
    const input = (await api('POST', '/inputs', { name: 'Truck input', type: 'CONNECTED_DEVICE', deviceId: 'enc-020' })).body;
    await putWorkflow(engine, { id: `wf-${dialect}-2`, status: 'STARTING', inputId: input.id });
    const edit = await api('PUT', `/inputs/${input.id}`, { deviceSettings: { bitrate: 8000 } });
    expect(edit.status).toBe(200);
    expect(edit.body.device.settingsSync).toMatchObject({ state: 'PENDING', reportedVersion: 4, desiredVersion: 5, desiredSettings: { bitrate: 8000 } });
    const beat = await api('POST', '/devices/enc-020/heartbeat', { settings: { bitrate: 8000 }, settingsVersion: 5 });
    expect(beat.body.settingsSync.state).toBe('IN_SYNC');
    expect((await api('GET', `/inputs/${input.id}`)).body.device.settings).toEqual({ bitrate: 8000 });
    // deviceSettings on a virtual input is refused
    const virtual = (await api('POST', '/inputs', { name: 'v', type: 'VIRTUAL_INPUT', protocol: 'RTMP_PUSH' })).body;
    await putWorkflow(engine, { id: `wf-${dialect}-3`, status: 'RUNNING', inputId: virtual.id });
    expect((await api('PUT', `/inputs/${virtual.id}`, { deviceSettings: { a: 1 } })).status).toBe(400);
  });

  it.skipIf(skip)('answers 404 for unknown inputs', async () => {
    expect((await api('GET', '/inputs/nope')).status).toBe(404);
    expect((await api('PUT', '/inputs/nope', { name: 'x' })).status).toBe(404);
    expect((await api('DELETE', '/inputs/nope')).status).toBe(404);
  });
});
