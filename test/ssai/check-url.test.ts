import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPlaylistUrl } from '../../ssai/check/check-url.js';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { startSsai, type SsaiHarness } from './setup.js';

describe('checkPlaylistUrl', () => {
  let h: SsaiHarness;
  beforeAll(async () => { h = await startSsai({ origin: { cueForm: 'oatcls' } }); });
  afterAll(async () => h?.close());

  it('finds nothing wrong in a stitched live stream reloaded while its window moves', async () => {
    const guid = await h.configure('/vast4');
    h.origin.position = (CLIP_SEGMENTS + BREAK_START) * SEGMENT_SECONDS;
    const sleep = async () => { h.origin.advance(SEGMENT_SECONDS); };
    expect(await checkPlaylistUrl(`${h.engine.url}/v1/master/${guid}/live/master.m3u8`, 8, { sleep })).toEqual([]);
  });

  it('reports a fetch failure and a body that is not HLS', async () => {
    expect((await checkPlaylistUrl(`${h.origin.url}/missing.m3u8`, 0))[0]?.rule).toBe('FETCH_FAILED');
    h.origin.fault = { kind: 'not-hls' };
    expect((await checkPlaylistUrl(`${h.origin.url}/live/master.m3u8`, 0))[0]?.rule).toBe('NOT_HLS');
    h.origin.fault = undefined;
  });
});
