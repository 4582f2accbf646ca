// An api engine without the packager role, on both dialects: with no packager alive a start fails at once with the
// reason; with a packager engine on the same database the start goes to it and its answer comes back.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NO_PACKAGER_REASON, RemoteChannelRuntime } from '../../../src/channels/remote-channel-runtime.js';
import { DIALECTS, dropPostgresSchema, postgresAvailable, startTestEngine, type DialectChoice, type TestEngine } from '../../helpers/engine.js';
import { catalogBlueprint, live } from './live-helpers.js';
import { loopClip, tinyBlueprint } from '../../e2e/live/live-helpers.js';

describe.each(DIALECTS)('channels from an api engine without the packager role on %s', (dialect: DialectChoice) => {
  let api: TestEngine;
  let packager: TestEngine | undefined;
  let combined: TestEngine | undefined;
  let auth: Record<string, string>;
  let unavailable = false;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-commands-'));
  const schema = `t_cmds_${randomBytes(5).toString('hex')}`;
  const shared = () => ({ dialect, dataDir, ...(dialect === 'postgres' ? { schema } : {}) });

  beforeAll(async () => {
    unavailable = dialect === 'postgres' && !(await postgresAvailable());
    if (unavailable) return;
    api = await startTestEngine({ ...shared(), roles: 'api' });
    auth = { Authorization: (await api.login()).IdToken };
  });
  afterAll(async () => {
    await combined?.close();
    await packager?.close();
    await api?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (dialect !== 'postgres' || unavailable) return;
    await dropPostgresSchema(schema);
  });
  beforeEach(({ skip }) => {
    if (unavailable) skip();
  });

  const startAndSettle = async (blueprint: Record<string, unknown>) => {
    const id = (await api.api('POST', '/workflows', { headers: auth, body: { blueprint, name: 'Show' } })).body.id as string;
    expect((await api.api('POST', '/channels', { headers: auth, body: { workflows: [id] } })).status).toBe(200);
    await live(api).channels.settled();
    return (await api.api('GET', `/channels/${id}`, { headers: auth })).body;
  };

  it('sends channel calls as commands, and fails a start at once when no packager is alive', async () => {
    expect(api.ctx.services.channelRuntime).toBeInstanceOf(RemoteChannelRuntime);
    const detail = await startAndSettle(catalogBlueprint('srt-push'));
    expect(detail).toMatchObject({ channelStatus: 'START_FAILED', statusReason: NO_PACKAGER_REASON });
    const commands = await api.ctx.store.db.selectFrom('channel_commands').selectAll().execute();
    expect(commands).toEqual([]);
  });

  it('runs the start on a packager engine of the same database and brings its answer back', async () => {
    packager = await startTestEngine({ ...shared(), roles: 'packager' });
    // a file outside the data directory: a refusal only the packager's MP4 front makes, not the api's validation
    const detail = await startAndSettle(tinyBlueprint('mp4-loop-test', (_channel, blueprint) => {
      blueprint.components.encoder.input.sources = [{ url: '/etc/hostname' }];
    }));
    expect(detail.channelStatus).toBe('START_FAILED');
    expect(detail.statusReason).toMatch(/\/etc\/hostname is outside the data directory/);
    const commands = await api.ctx.store.db.selectFrom('channel_commands').select(['kind', 'status', 'claimed_by']).orderBy('created_at').execute();
    expect(commands.map((c) => [c.kind, c.status])).toEqual([['start', 'failed'], ['stop', 'done']]);
    expect(commands[0]?.claimed_by).toBe(packager.ctx.services.channelCommandWorker?.id);
  });

  it('stops from an api-only engine a channel that an api+packager engine started on its own runtime', { timeout: 90_000 }, async () => {
    combined = await startTestEngine({ ...shared(), roles: 'api,packager' });
    await loopClip(combined);
    const id = (await combined.api('POST', '/workflows', { headers: auth, body: { blueprint: tinyBlueprint('mp4-loop-test'), name: 'Mixed' } })).body.id as string;
    expect((await combined.api('POST', '/channels', { headers: auth, body: { workflows: [id] } })).status).toBe(200);
    await live(combined).channels.settled();
    expect((await combined.api('GET', `/channels/${id}`, { headers: auth })).body.channelStatus).toBe('RUNNING');
    const workerId = combined.ctx.services.channelCommandWorker?.id;
    // the combined engine called its runtime directly; it takes ownership within a heartbeat
    for (let i = 0; i < 40; i++) {
      const owner = await api.ctx.store.db.selectFrom('channel_owners').select('packager_id').where('workflow_id', '=', id).executeTakeFirst();
      if (owner?.packager_id === workerId) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect((await api.api('DELETE', '/channels', { headers: auth, body: { workflows: [id] } })).status).toBe(200);
    await live(api).channels.settled();
    expect((await api.api('GET', `/channels/${id}`, { headers: auth })).body.channelStatus).toBe('DONE');
    expect(combined.ctx.services.liveRuntime?.channel(id)).toBeUndefined();
  });
});
