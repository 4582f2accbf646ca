// The front registry: a protocol without a front, or an input without a protocol, fails with a reason naming it.
import { describe, expect, it } from 'vitest';
import type { ChannelSpec } from '../../../kernel/seams/channel-runtime.js';
import { FrontRegistry } from '../../../packager/ingest/front-registry.js';

const spec = { workflowId: 'w', organizationId: 'o' } as ChannelSpec;

describe('front registry', () => {
  it('builds the pull fronts and names the protocols it lacks', async () => {
    const registry = new FrontRegistry();
    expect(registry.protocols()).toEqual(['URL_PULL', 'RTMP_PULL', 'MP4']);
    await expect(registry.create({ spec, input: { name: 'cam', type: 'SRT_PUSH' }, dataDir: '/tmp' }))
      .rejects.toThrow('input cam: the SRT_PUSH protocol is not available in this engine yet (available: URL_PULL, RTMP_PULL, MP4)');
    await expect(registry.create({ spec, input: { name: 'm', managedInputId: 'gone' }, dataDir: '/tmp' })).rejects.toThrow(/m has no protocol \(managed input gone gives none\)/);
    const pull = await registry.create({ spec, input: { name: 'p', type: 'URL_PULL', sources: [{ url: 'https://cdn.example.com/a.m3u8', username: 'u', password: 'p w' }] }, dataDir: '/tmp' });
    expect(pull.endpoint.url).toBe('https://cdn.example.com/a.m3u8');
    expect(pull.front.encoderInputArgs().at(-1)).toBe('https://u:p%20w@cdn.example.com/a.m3u8');
    await expect(registry.create({ spec, input: { name: 'f', type: 'MP4', sources: [{ url: '../etc/passwd' }] }, dataDir: '/tmp/data' })).rejects.toThrow(/outside the data directory/);
  });

  it('asks the resolver for the protocol of a managed input', async () => {
    const registry = new FrontRegistry();
    registry.setProtocolResolver(async () => 'RTMP_PULL');
    const built = await registry.create({ spec, input: { name: 'm', managedInputId: 'in-1', sources: [{ url: 'rtmp://origin.example.com/app/key' }] }, dataDir: '/tmp' });
    expect(built.front.protocol).toBe('RTMP_PULL');
  });
});
