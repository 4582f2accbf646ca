// Issue 31 point 6 through the real proxy: every variable of the ad server URL reaches the ad server filled, in both
// insertion modes. The break's cue is an SCTE-35 time_signal with a segmentation UPID from the shared vectors, put on
// the origin's EXT-X-DATERANGE SCTE35-OUT; the player's User-Agent, its address and its `ads.` parameters come from
// the request that made the session.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { decodeScte35 } from '../../media/scte35.js';
import { scanMediaPlaylist, scanMultivariantPlaylist } from '../../media/playlist-scanner.js';
import type { PrepareFn } from '../../ssai/decide/creative-cache.js';
import { VECTORS_DIR, vectorPath } from '../helpers/vectors.js';
import { startSsai, type SsaiHarness } from './setup.js';

type Sample = { name: string; base64: string; expect: { splice_command_type: number } };

/** The first time_signal of the vectors with a segmentation UPID, as hex for SCTE35-OUT. */
function timeSignalWithUpid(): { hex: string; eventId: number; upidHex: string; typeId: number } {
  const samples = JSON.parse(readFileSync(vectorPath('scte35-samples.json'), 'utf8')) as Sample[] | { samples: Sample[] };
  for (const s of Array.isArray(samples) ? samples : samples.samples) {
    const d = decodeScte35(s.base64);
    if (!d.ok || d.value.command.type !== 'time_signal') continue;
    const seg = d.value.descriptors.find((x) => x.kind === 'segmentation');
    if (seg?.kind !== 'segmentation' || !seg.upidHex) continue;
    return { hex: `0x${Buffer.from(s.base64, 'base64').toString('hex').toUpperCase()}`, eventId: seg.segmentationEventId, upidHex: seg.upidHex, typeId: seg.segmentationTypeId };
  }
  throw new Error('no time_signal with a segmentation UPID in the vectors');
}

/** No encoder: the ads are skipped (the decision, which is what is tested here, is made all the same). */
const noEncoder: PrepareFn = async () => ({ ok: false, error: { code: 'VOD_ENCODE_FAILED', message: 'no encoder in this test', reason: 'test' } });

const TEMPLATE = '/vast4?sid=[session.id]&ua=[session.user_agent]&ip=[session.client_ip]&n=[avail.index]&d=[avail.duration]'
  + '&r=[avail.random]&ev=[scte.event_id]&upid=[scte.segmentation_upid]&type=[scte.segmentation_type_id]&g=[player_params.genre]'
  + '&cb=[cachebuster]&x=[session.nope]&y=[scte.nope]&m=[CACHEBUSTING]&z=[their_macro]';
const USER_AGENT = 'TestPlayer/1.0 (Linux; "quoted") café';

describe.skipIf(!VECTORS_DIR)('ad server URL variables', () => {
  let h: SsaiHarness;
  let guid: string;
  let cue: ReturnType<typeof timeSignalWithUpid>;

  beforeAll(async () => {
    cue = timeSignalWithUpid();
    h = await startSsai({ origin: { cueForm: 'daterange' }, prepare: noEncoder, creativeWaitMs: 5_000 });
    // The origin's break starts with the vectors' time_signal instead of its own splice_insert.
    h.origin.rewrite = (_path, body) => body.replace(/SCTE35-OUT=0x[0-9A-F]+/g, `SCTE35-OUT=${cue.hex}`);
    h.origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS;
    guid = await h.configure(TEMPLATE);
  }, 120_000);
  afterAll(async () => h?.close());

  /** A new session's master playlist (made with this player's User-Agent) and its video and audio playlist URLs. */
  async function session(query: string): Promise<{ sid: string; video: string; audio: string }> {
    const master = await h.get(`/v1/master/${guid}/live/master.m3u8?${query}`, { headers: { 'user-agent': USER_AGENT } });
    expect(master.status, master.text).toBe(200);
    const pl = scanMultivariantPlaylist(master.text).playlist!;
    const video = pl.variants[0]!.uri;
    return { sid: video.split('/')[4]!, video, audio: pl.renditions.find((r) => r.uri)!.uri! };
  }

  const requestsOf = (sid: string) => h.vast.requests.filter((r) => r.path === '/vast4' && r.query.get('sid') === sid);

  it('fills every variable in stitched mode, asks once for all renditions, and leaves foreign macros to the ad server', async () => {
    const s = await session('ads.genre=news%20%26%20sport');
    // another player's User-Agent on the renditions changes nothing: the session keeps its maker's
    for (const url of [s.video, s.audio]) expect((await h.get(url, { headers: { 'user-agent': 'other' } })).status).toBe(200);
    const asked = requestsOf(s.sid);
    expect(asked).toHaveLength(1);
    const q = asked[0]!.query;
    expect(q.get('ua')).toBe(USER_AGENT);
    expect(q.get('ip')).toBe('127.0.0.1');
    expect(q.get('n')).toBe('0');
    expect(Number(q.get('d'))).toBeGreaterThan(0);
    expect(q.get('r')).toMatch(/^\d{1,10}$/);
    expect(q.get('ev')).toBe(String(cue.eventId));
    expect(q.get('upid')).toBe(cue.upidHex);
    expect(q.get('type')).toBe(String(cue.typeId));
    expect(q.get('g')).toBe('news & sport');
    expect(q.get('cb')).toMatch(/^\d+$/);
    // unknown names of our namespaces are sent empty; the ad server's own macros are left as they are
    expect(q.get('x')).toBe('');
    expect(q.get('y')).toBe('');
    expect(q.get('m')).toBe('[CACHEBUSTING]');
    expect(q.get('z')).toBe('[their_macro]');
  });

  it('fills the same variables in guided mode, with the same avail.random for the same break', async () => {
    const stitched = await session('ads.genre=a');
    await h.get(stitched.video);
    const s = await session('ads.mode=guided&ads.genre=b');
    const text = (await h.get(s.video)).text;
    const pl = scanMediaPlaylist(text).playlist!;
    const dr = [...pl.header, ...pl.segments.flatMap((x) => x.tags)].find((t) => t.name === 'EXT-X-DATERANGE' && t.value.includes('X-ASSET-LIST'));
    const list = /X-ASSET-LIST="([^"]+)"/.exec(dr!.value)![1]!;
    expect((await h.get(new URL(list, `${h.engine.url}${s.video}`).href)).status).toBe(200);
    const [guided, plain] = [requestsOf(s.sid), requestsOf(stitched.sid)];
    expect(guided).toHaveLength(1);
    const q = guided[0]!.query;
    expect([q.get('ua'), q.get('ip'), q.get('g'), q.get('ev'), q.get('upid'), q.get('type')])
      .toEqual([USER_AGENT, '127.0.0.1', 'b', String(cue.eventId), cue.upidHex, String(cue.typeId)]);
    // one break, one number, whichever viewer or mode asks; the cache buster is each request's own
    expect(q.get('r')).toBe(plain[0]!.query.get('r'));
    expect(q.get('cb')).not.toBe(plain[0]!.query.get('cb'));
  });
});
