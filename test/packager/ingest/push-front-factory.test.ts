import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushInputError, pushFrontFactory, pushProtocolOf } from '../../../packager/ingest/push-front-factory.js';
import { startTestEngine, type TestEngine } from '../../helpers/engine.js';
import { killStarted, nextEvent, startSender } from './ingest-harness.js';

describe('push front factory (the runtime\'s front registry entry)', () => {
  let engine: TestEngine;
  let auth: Record<string, string>;
  let organizationId: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    auth = { Authorization: (await engine.login()).IdToken };
    organizationId = engine.defaultOrganizationId;
  });

  afterAll(async () => {
    await killStarted();
    await engine.close();
  });

  const spec = (inputWhitelistCIDRs: string[] = []) => ({ workflowId: 'wf-1', organizationId, inputWhitelistCIDRs });

  it('opens a managed RTMP input with its own key and CIDRs, and the same endpoint at every start', async () => {
    const created = (await engine.api('POST', '/inputs', { headers: auth, body: { name: 'studio', type: 'VIRTUAL_INPUT', protocol: 'RTMP_PUSH', cidrs: ['127.0.0.1/32'] } })).body;
    const request = { spec: spec(), input: { name: 'studio-in', managedInputId: created.id } };
    expect(await pushProtocolOf(engine.ctx, request)).toBe('RTMP_PUSH');
    const open = pushFrontFactory(engine.ctx);
    const first = await open(request);
    expect(first.endpoint.streamKey).toBe(created.ingest.streamKey);
    const connected = nextEvent(first.front, 'connected');
    const sender = startSender(first.endpoint.url, 'flv');
    expect((await connected).remoteAddress).toBe('127.0.0.1');
    await first.front.close();
    await sender.exited;

    const second = await open(request);
    expect(second.endpoint).toEqual(first.endpoint);
    await second.front.close();
  });

  it('keeps out a sender the input admits but the workflow\'s allow-list does not', async () => {
    const { front, endpoint } = await pushFrontFactory(engine.ctx)({
      spec: spec(['127.0.0.2/32']),
      input: { name: 'open-in', type: 'RTMP_PUSH', inputSecurityGroups: ['0.0.0.0/0'] },
    });
    const rejected = nextEvent(front, 'rejected');
    startSender(endpoint.url, 'flv', { seconds: 3 });
    expect((await rejected).reason).toBe('address outside the CIDR list');
    await front.close();
  });

  it('refuses an unknown managed input, a protocol that contradicts it, and a pull input', async () => {
    const open = pushFrontFactory(engine.ctx);
    await expect(open({ spec: spec(), input: { name: 'x', managedInputId: 'no-such-input' } })).rejects.toThrow(PushInputError);
    const rist = (await engine.api('POST', '/inputs', { headers: auth, body: { name: 'rist', type: 'VIRTUAL_INPUT', protocol: 'RIST' } })).body;
    await expect(open({ spec: spec(), input: { name: 'y', type: 'SRT_PUSH', managedInputId: rist.id } })).rejects.toThrow(/blueprint says SRT_PUSH but managed input .* is RIST/);
    await expect(open({ spec: spec(), input: { name: 'z', type: 'URL_PULL' } })).rejects.toThrow(/URL_PULL is not a push protocol/);
    expect(await pushProtocolOf(engine.ctx, { spec: spec(), input: { name: 'z', type: 'URL_PULL' } })).toBeUndefined();
  });
});
