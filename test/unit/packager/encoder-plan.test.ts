// Blueprint encoderSettings → the channel's encoder plan (renditions, HLS group, archive, RTMP outputs).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChannelSpec } from '../../../packager/channel-runtime.js';
import { buildEncoderPlan, codecsOf } from '../../../packager/encode/encoder-plan.js';

function spec(id: string, edit?: (channel: Record<string, any>) => void, archive = false): ChannelSpec {
  const blueprint = JSON.parse(fs.readFileSync(`fixtures/blueprints/${id}.json`, 'utf8')) as ChannelSpec['blueprint'];
  const channel = Object.values(blueprint.components).find((c) => c.channel)!.channel as Record<string, any>;
  edit?.(channel);
  return { workflowId: 'w', organizationId: 'o', region: 'local', blueprint, inputWhitelistCIDRs: [], archive: { enabled: archive, defaultArchiveGroup: archive }, activeInput: 'x' };
}

describe('encoder plan', () => {
  it('reads the catalog ladder: renditions in output order, segment length, codecs', () => {
    const plan = buildEncoderPlan(spec('rtmp-push-abr'));
    expect(plan.renditions.map((r) => [r.id, r.width, r.height, r.videoBitrate, r.gopFrames])).toEqual([
      ['1080p', 1920, 1080, expect.any(Number), 60], ['720p', 1280, 720, 3_000_000, 60], ['480p', 854, 480, expect.any(Number), 60],
    ]);
    expect(plan.hls).toEqual({ destinationId: 'hls-origin', segmentSeconds: 6, segmentType: 'ts' });
    expect(codecsOf(plan.renditions[1]!)).toBe('avc1.64001f,mp4a.40.2');
    expect(plan.archiveRenditionId).toBeUndefined();
  });

  it('archives the top rendition for the default archive group, and PUTs to a real CDN URL', () => {
    const plan = buildEncoderPlan(spec('srt-push', (channel) => { channel.destinations[0].settings[0].url = 'https://cdn.example.com/in/ch/master.m3u8'; }, true));
    expect(plan.archiveRenditionId).toBe('720p');
    expect(plan.hls.putUrl).toBe('https://cdn.example.com/in/ch/master.m3u8');
  });

  it('names what is wrong: a missing HLS group, an unknown video description, an RTMP output without a URL', () => {
    expect(() => buildEncoderPlan(spec('srt-push', (channel) => { channel.encoderSettings.outputGroups = [{ name: 'x', outputGroupSettings: { archiveGroupSettings: {} }, outputs: [] }]; })))
      .toThrow(/no HLS output group/);
    expect(() => buildEncoderPlan(spec('srt-push', (channel) => { channel.encoderSettings.outputGroups[0].outputs[0].videoDescriptionName = 'nope'; })))
      .toThrow(/videoDescriptionName nope/);
    expect(() => buildEncoderPlan(spec('srt-push', (channel) => {
      channel.encoderSettings.outputGroups.push({ outputGroupSettings: { rtmpGroupSettings: {} }, outputs: [{ outputSettings: { rtmpOutputSettings: { destination: { destinationRefId: 'gone' } } } }] });
    }))).toThrow(/RTMP output names destination gone/);
  });
});
