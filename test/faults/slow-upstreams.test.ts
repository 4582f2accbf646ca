// Issue 32 item 6: a slow origin and a slow ad server. One engine with the ssai part (its product defaults: origin
// timeout 2 s, playlists reused for a target duration, decision deadline 1.5 s, ad server budget 3 s) in front of a
// hostile upstream that plays both the origin and the ad server (test/faults/hostile-upstream.ts). Every check is
// made from outside: the answer's code, and that it came before the hostile upstream would have finished.
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BREAK_START, CLIP_SEGMENTS, OriginServer, SEGMENT_SECONDS } from '../../fixtures/origin-server.js';
import { VastServer } from '../../fixtures/vast-server.js';
import type { TestEngine } from '../helpers/engine.js';
import { segmentUris, startEngineWith, variantUrls } from '../ssai/setup.js';
import { sleep, until } from '../cluster/cluster.js';
import { HostileUpstream, type Hostility } from './hostile-upstream.js';

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = (): number => { gc(); gc(); return process.memoryUsage().heapUsed; };

const ORIGIN_TIMEOUT_MS = 2000;
const DECISION_DEADLINE_MS = 1500;
/** what a loaded 2-core machine may add to any answer: generous, never the thing measured */
const SLACK_MS = 8000;
const MB = 1024 * 1024;

const SLOW: Array<[string, Hostility]> = [
  ['late', { kind: 'delay', ms: 5000 }],
  ['dribbling', { kind: 'dribble', everyMs: 100 }],
  ['holding', { kind: 'hold' }],
];

type Answer = { status: number; text: string; ms: number; code?: string };

describe('a slow origin and a slow ad server (one engine)', () => {
  let engine: TestEngine;
  let origin: OriginServer;
  let vast: VastServer;
  let hostile: HostileUpstream;
  let auth: Record<string, string>;

  const get = async (url: string): Promise<Answer> => {
    const started = Date.now();
    const res = await fetch(`${engine.url}${url}`, { redirect: 'manual' });
    const text = await res.text();
    const ms = Date.now() - started;
    const code = res.status >= 400 ? (JSON.parse(text) as { code?: string }).code : undefined;
    return { status: res.status, text, ms, ...(code ? { code } : {}) };
  };
  const configure = async (source: string, adServer: string): Promise<string> => {
    const made = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { name: 'slow upstreams', type: 'live', ad_server: adServer, source_url: source } });
    expect(made.status).toBe(200);
    return made.body.guid as string;
  };
  /** a new viewer's video playlist path */
  const join = async (guid: string): Promise<string> => {
    const master = await get(`/v1/master/${guid}/live/master.m3u8`);
    expect(master.status).toBe(200);
    return variantUrls(master.text).find((u) => !master.text.includes(`URI="${u}"`))!;
  };
  const metric = async (name: string, labels: string): Promise<number> => {
    const text = await engine.ctx.metrics.registry.metrics();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  beforeAll(async () => {
    [origin, vast] = await Promise.all([OriginServer.start({ cueForm: 'cue-out' }), VastServer.start()]);
    // One prefix per case, so no case reads a playlist another one left in the proxy's cache.
    const prefixes: Record<string, string> = {};
    for (const [name] of SLOW) { prefixes[`/origin-new-${name}`] = origin.url; prefixes[`/origin-live-${name}`] = origin.url; }
    for (const name of ['endless', 'huge', 'huge-announced', 'crowd']) prefixes[`/origin-${name}`] = origin.url;
    for (const name of [...SLOW.map(([n]) => n), 'endless', 'beacons', 'crowd']) prefixes[`/ads-${name}`] = vast.url;
    hostile = await HostileUpstream.start(prefixes);
    // The proxy's defaults, except: no cut before an undecided break (the playlist waits for the decision: the worst
    // case the deadline bounds) and a creative wait long enough for the first preparation on a busy machine.
    engine = await startEngineWith({ originCacheMs: undefined, decisionDeadlineMs: DECISION_DEADLINE_MS, cutBeforeUndecidedBreaks: false, creativeWaitMs: 120_000 });
    auth = { Authorization: (await engine.login()).IdToken };
    origin.position = (CLIP_SEGMENTS + BREAK_START + 6) * SEGMENT_SECONDS; // a break in the window
  }, 180_000);

  afterAll(async () => {
    await engine?.close();
    await hostile?.close();
    await Promise.all([origin?.close(), vast?.close()]);
  });

  it.each(SLOW)('answers 504 ORIGIN_TIMEOUT within the origin timeout when the origin is %s; a live viewer keeps its last playlist a few seconds, then gets 504 too', async (name, how) => {
    const fresh = await configure(`${hostile.url}/origin-new-${name}/`, `${vast.url}/vast4`);
    const live = await configure(`${hostile.url}/origin-live-${name}/`, `${vast.url}/vast4`);
    const video = await join(live);
    const before = await get(video);
    expect(before.status).toBe(200);
    // after the viewer's start, the only playlist the proxy asks of this origin is the viewer's media playlist
    const mediaPath = `/origin-live-${name}`;
    hostile.behave(`/origin-new-${name}`, how);
    hostile.behave(`/origin-live-${name}`, how);
    const askedBefore = hostile.requests(mediaPath);

    // A new session: the documented error, long before the upstream would have answered (had the proxy waited for
    // the late or dribbled answer, it would have been a 200).
    const master = await get(`/v1/master/${fresh}/live/master.m3u8`);
    expect(master).toMatchObject({ status: 504, code: 'ORIGIN_TIMEOUT' });
    expect(master.ms).toBeLessThan(ORIGIN_TIMEOUT_MS + SLACK_MS);

    // The live viewer: while a refresh is out at the origin, its reloads get the playlist the proxy last had (the
    // same segments); once that copy is more than 4 s past its reuse time, the origin's error.
    let staleWhileAsking = 0;
    const reloads: Answer[] = [];
    const failed = await until(`a 504 on the reload of a viewer whose origin is ${name}`, 60_000, async () => {
      const asked = hostile.requests(mediaPath);
      const r = await get(video);
      reloads.push(r);
      if (r.status === 200 && asked > askedBefore && hostile.pendingRequests(`/origin-live-${name}`) > 0) staleWhileAsking++;
      return r.status === 504 ? r : undefined;
    });
    expect(failed.code).toBe('ORIGIN_TIMEOUT');
    for (const r of reloads) {
      expect(r.ms).toBeLessThan(ORIGIN_TIMEOUT_MS + SLACK_MS);
      if (r.status === 200) expect(segmentUris(r.text)).toEqual(segmentUris(before.text));
      else expect(r).toMatchObject({ status: 504, code: 'ORIGIN_TIMEOUT' });
    }
    expect(staleWhileAsking).toBeGreaterThan(0);

    // The origin back: the same viewer and a new one play again.
    hostile.release();
    await until('the live viewer to reload again', 30_000, async () => ((await get(video)).status === 200 ? true : undefined));
    expect((await get(`/v1/master/${fresh}/live/master.m3u8`)).status).toBe(200);
  }, 120_000);

  it.each([
    ['endless', { kind: 'endless' }],
    ['huge', { kind: 'huge', bytes: 256 * MB, announce: false }],
    ['huge-announced', { kind: 'huge', bytes: 256 * MB, announce: true }],
  ] as Array<[string, Hostility]>)('refuses an origin body past 2 MiB with 502 ORIGIN_TOO_LARGE (%s), its memory bounded', async (name, how) => {
    const guid = await configure(`${hostile.url}/origin-${name}/`, `${vast.url}/vast4`);
    hostile.behave(`/origin-${name}`, how);
    const heapBefore = heapAfterGc();
    const answers = await Promise.all(Array.from({ length: 5 }, () => get(`/v1/master/${guid}/live/master.m3u8`)));
    for (const r of answers) expect(r).toMatchObject({ status: 502, code: 'ORIGIN_TOO_LARGE' });
    const grown = heapAfterGc() - heapBefore;
    expect(grown).toBeLessThan(100 * MB);
    // the proxy dropped the body: no request of it is left open at the upstream
    await until(`the ${name} bodies to be dropped`, 30_000, async () => (hostile.pendingRequests(`/origin-${name}`) === 0 ? true : undefined));
    hostile.release();
  }, 120_000);

  it('stitches ads through the hostile upstream when it behaves; beacons go on while the ad server holds, and a trickling tracker holds them 2 s at most', async () => {
    const guid = await configure(`${origin.url}/`, `${hostile.url}/ads-beacons/vast4`);
    // a session with ads (the first one waits for the creatives' preparation); its beacons go to the hostile upstream
    const { ads } = await until('a viewer with ads', 180_000, async () => {
      const got = segmentUris((await get(await join(guid))).text).filter((u) => u.startsWith('/v1/segment/'));
      return got.length > 0 ? { ads: got } : undefined;
    });
    hostile.behave('/ads-beacons/vast4', { kind: 'hold' });
    const held = await get(await join(guid));
    expect(held.status).toBe(200);
    expect(held.ms).toBeLessThan(DECISION_DEADLINE_MS + SLACK_MS);
    expect(segmentUris(held.text).every((u) => u.startsWith(origin.url))).toBe(true);
    // the viewer with ads: its ad segments redirect at once and their beacons reach the tracker
    const impressions = vast.beaconCount('impression', 'a');
    for (const ad of ads) expect((await get(ad)).status).toBe(302);
    await engine.ctx.services.ssai!.beacons.idle();
    expect(vast.beaconCount('impression', 'a')).toBeGreaterThan(impressions);

    // A tracker that answers its headers and then a byte every 100 ms for ever: each beacon's answer is cut within the
    // beacon timeout (2 s), so the beacon queue drains instead of waiting on it for ever.
    hostile.behave('/ads-beacons/track', { kind: 'trickle', everyMs: 100 });
    const trickled = hostile.requests('/ads-beacons/track');
    const { ads: more } = await until('a second viewer with ads', 60_000, async () => {
      hostile.behave('/ads-beacons/vast4', { kind: 'pass' });
      const got = segmentUris((await get(await join(guid))).text).filter((u) => u.startsWith('/v1/segment/'));
      return got.length > 0 ? { ads: got } : undefined;
    });
    const started = Date.now();
    for (const ad of more) expect((await get(ad)).status).toBe(302);
    await engine.ctx.services.ssai!.beacons.idle();
    expect(hostile.requests('/ads-beacons/track')).toBeGreaterThan(trickled);
    // 2 s and a quarter per beacon, 16 at a time; the trickle alone would never end
    expect(Date.now() - started).toBeLessThan(2500 + SLACK_MS * 2);
    await until('no beacon left open at the tracker', 30_000, async () => (hostile.pendingRequests('/ads-beacons') === 0 ? true : undefined));
    hostile.release();
  }, 300_000);

  it.each([...SLOW, ['endless', { kind: 'endless' }] as [string, Hostility]])('plays the break as content within the decision deadline when the ad server is %s', async (name, how) => {
    const reason = how.kind === 'endless' ? 'malformed' : 'timeout';
    hostile.behave(`/ads-${name}`, how);
    const guid = await configure(`${origin.url}/`, `${hostile.url}/ads-${name}/vast4`);
    const errors = await metric('ssai_ad_server_errors_total', `reason="${reason}"`);
    const video = await join(guid);
    const playlist = await get(video);
    expect(playlist.status).toBe(200);
    expect(playlist.ms).toBeLessThan(DECISION_DEADLINE_MS + SLACK_MS);
    const uris = segmentUris(playlist.text);
    expect(uris).toHaveLength(6);
    expect(uris.every((u) => u.startsWith(origin.url))).toBe(true);
    // the decision itself ends within the ad server budget (3 s) and is counted; the session never changes its mind
    await until(`the ${name} ad server's decision to be counted`, 30_000, async () =>
      ((await metric('ssai_ad_server_errors_total', `reason="${reason}"`)) > errors ? true : undefined));
    expect(segmentUris((await get(video)).text)).toEqual(uris);
    hostile.release();
  }, 120_000);

  it('keeps sockets and memory bounded under 300 viewers against a holding origin and a holding ad server, and recovers', async () => {
    // more viewers than the decisions the proxy runs at once (256, docs/ssai.md "Crowds and the ad server")
    const viewers = 300;
    const guid = await configure(`${hostile.url}/origin-crowd/`, `${hostile.url}/ads-crowd/vast4`);
    hostile.behave('/ads-crowd', { kind: 'hold' });
    const videos = await Promise.all(Array.from({ length: viewers }, () => join(guid)));
    const heapBefore = heapAfterGc();
    hostile.resetPeak();
    const originBefore = hostile.requests('/origin-crowd');
    // Every viewer asks for its playlist (its break's decision goes to the held ad server), then the origin holds
    // too and every viewer reloads once a second for 15 s.
    const first = await Promise.all(videos.map((v) => get(v)));
    expect(first.every((r) => r.status === 200)).toBe(true);
    hostile.behave('/origin-crowd', { kind: 'hold' });
    const statuses = new Map<string, number>();
    let slowest = 0;
    const stopAt = Date.now() + 15_000;
    await Promise.all(videos.map(async (v) => {
      while (Date.now() < stopAt) {
        const r = await get(v);
        const key = `${r.status}${r.code ? ` ${r.code}` : ''}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        slowest = Math.max(slowest, r.ms);
        await sleep(1000);
      }
    }));
    const heapGrown = heapAfterGc() - heapBefore;
    const figures = {
      answers: Object.fromEntries(statuses), slowestMs: slowest, peakConnections: hostile.peakConnections,
      peakOriginRequests: hostile.peakRequests('/origin-crowd'), originRequests: hostile.requests('/origin-crowd') - originBefore,
      peakAdRequests: hostile.peakRequests('/ads-crowd'), adRequests: hostile.requests('/ads-crowd'), heapGrownMB: Math.round(heapGrown / MB),
    };
    process.stderr.write(`slow upstreams, ${viewers} viewers: ${JSON.stringify(figures)}\n`);
    // only 200 (the last copy) and 504 ORIGIN_TIMEOUT, each within the origin timeout
    expect([...statuses.keys()].every((k) => k === '200' || k === '504 ORIGIN_TIMEOUT')).toBe(true);
    expect(slowest).toBeLessThan(ORIGIN_TIMEOUT_MS + SLACK_MS);
    // one origin request per playlist URL at a time (the viewers share it), not one per viewer
    expect(figures.peakOriginRequests).toBeLessThanOrEqual(2);
    expect(figures.originRequests).toBeLessThan(40);
    // one decision per viewer and break, never asked again on a reload, at most 256 at once (the others, still in
    // line at the decision deadline, are never sent), each given up within the ad server budget
    expect(figures.adRequests).toBeLessThanOrEqual(viewers);
    expect(figures.peakAdRequests).toBeLessThanOrEqual(256);
    expect(figures.peakConnections).toBeLessThanOrEqual(256 + 10);
    expect(heapGrown).toBeLessThan(100 * MB);

    hostile.release();
    await until('a normal reload to work again', 30_000, async () => ((await get(videos[0]!)).status === 200 ? true : undefined));
    await until('no connection left open on the upstream', 60_000, async () => (hostile.openConnections === 0 ? true : undefined));
  }, 180_000);
});
