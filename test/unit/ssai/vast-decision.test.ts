import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VECTORS_DIR, vectorPath } from '../../helpers/vectors.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeScte35 } from '../../../media/scte35.js';
import { encodeScte35 } from '../../../media/scte35-encoder.js';
import { fillAdServerUrl, parseVmap, pickAdsForAvail, VastDecisionClient } from '../../../ssai/decide/vast-decision.js';

const IAB = VECTORS_DIR ? `${vectorPath('vast-iab')}/` : '';
const iab = (rel: string): string => readFileSync(IAB + rel, 'utf8');

// A local ad server: IAB documents with their wrapper URLs pointed back at it, plus the faults of issue 5 point 4.
let server: Server;
let base = '';
const hits: string[] = [];
let endlessClosed = 0;
// The IAB wrapper says followAdditionalWrappers="0"; chains of several wrappers need it allowed.
const wrapperTo = (target: string) => iab('4.0/Wrapper_Tag-test.xml').replace('followAdditionalWrappers="0"', 'followAdditionalWrappers="1"').replace(/<VASTAdTagURI>[\s\S]*?<\/VASTAdTagURI>/, `<VASTAdTagURI><![CDATA[${base}${target}]]></VASTAdTagURI>`);
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(req.url ?? '');
    const send = (body: string, status = 200) => { res.writeHead(status, { 'content-type': 'application/xml' }); res.end(body); };
    const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/inline') return send(iab('4.0/Inline_Linear_Tag-test.xml'));
    if (url.pathname === '/wrapper') return send(wrapperTo('/inline'));
    if (chain) { const n = Number(chain[1]); return send(n === 0 ? iab('4.0/Inline_Linear_Tag-test.xml') : wrapperTo(`/chain/${n - 1}`)); }
    if (url.pathname === '/slow') { setTimeout(() => send(iab('4.0/Inline_Linear_Tag-test.xml')), 3000); return; }
    if (url.pathname === '/wrapper-to-slow') return send(wrapperTo('/slow'));
    if (url.pathname === '/error') return send('oops', 500);
    // an answer of 64 KB, and an error whose body never ends (a chunk every 5 ms until the client goes)
    if (url.pathname === '/large') return send(`<VAST version="4.0"><!--${'x'.repeat(64 * 1024)}--></VAST>`);
    if (url.pathname === '/endless-error') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('z'.repeat(4096)), 5);
      res.on('close', () => { clearInterval(t); endlessClosed++; });
      return;
    }
    if (url.pathname === '/malformed') return send('<VAST version="4.0"><Ad><InLine>');
    if (url.pathname === '/empty') return send('<VAST version="4.0"/>');
    if (url.pathname === '/html') return send('<html><body>hi</body></html>');
    if (url.pathname === '/vmap') {
      return send(`<vmap:VMAP xmlns:vmap="http://www.iab.net/videosuite/vmap" version="1.0">
  <vmap:AdBreak timeOffset="start" breakType="linear" breakId="pre"><vmap:AdSource id="a" allowMultipleAds="false" followRedirects="true">
    <vmap:AdTagURI templateType="vast4"><![CDATA[${base}/inline]]></vmap:AdTagURI></vmap:AdSource></vmap:AdBreak>
  <vmap:AdBreak timeOffset="00:10:00.000" breakType="linear" breakId="mid"><vmap:AdSource id="b"><vmap:VASTAdData>${iab('4.0/Inline_Linear_Tag-test.xml').replace(/<\?xml[^>]*\?>/, '')}</vmap:VASTAdData></vmap:AdSource></vmap:AdBreak>
</vmap:VMAP>`);
    }
    send('', 404);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const req = (path: string) => ({ adServerUrl: `${base}${path}`, sessionId: 's1', availIndex: 0, availDuration: 30 });

describe('ad server URL template', () => {
  it('fills session, avail, cachebuster, scte and player parameters, URL-encoded', () => {
    const cue = decodeScte35(encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 42, outOfNetwork: true, breakDuration: 30 * 90000, availNum: 2 } }).base64);
    if (!cue.ok) throw new Error('cue');
    const url = fillAdServerUrl(
      'https://ads.example.com/vast?sid=[session.id]&d=[avail.duration]&i=[avail.index]&cb=[cachebuster]&ev=[scte.event_id]&an=[scte.avail_num]&kw=[player_params.kw]&none=[player_params.missing]&m=[TIMESTAMP]',
      { sessionId: 'a b/c', availIndex: 3, availDuration: 29.97, scte35: cue.value, playerParams: { kw: 'sport&news' } }, () => 0.5,
    );
    expect(url).toBe('https://ads.example.com/vast?sid=a%20b%2Fc&d=30&i=3&cb=5000000000&ev=42&an=2&kw=sport%26news&none=&m=[TIMESTAMP]');
  });
});

describe('ad picking', () => {
  it('takes ads in order, skips the ones too long for what is left, and leaves the rest as slate', () => {
    const ads = [{ id: 'a', duration: 15 }, { id: 'b', duration: 20 }, { id: 'c', duration: 10 }, { id: 'd', duration: 4 }];
    const { ads: chosen, slateDuration } = pickAdsForAvail(ads, 30);
    expect(chosen.map((a) => a.id)).toEqual(['a', 'c', 'd']);
    expect(slateDuration).toBe(1);
    expect(pickAdsForAvail(ads, 5).ads.map((a) => a.id)).toEqual(['d']);
    expect(pickAdsForAvail([{ duration: 30.3 }], 30).slateDuration).toBe(0);
  });
});

describe.skipIf(!VECTORS_DIR)('VAST parsing', () => {
  const client = new VastDecisionClient();

  it('reads the IAB VAST 4.0 inline linear sample: ids, duration, media files and every tracking event', async () => {
    const res = await client.fromText(iab('4.0/Inline_Linear_Tag-test.xml'), 'http://x/');
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    const [ad] = res.ads;
    expect(ad).toMatchObject({ adId: '20001', creativeId: '5480', duration: 16, sequence: 1 });
    expect(ad?.mediaFiles).toHaveLength(3);
    expect(ad?.mediaFiles[0]).toEqual({ url: 'https://iab-publicfiles.s3.amazonaws.com/vast/VAST-4.0-Short-Intro.mp4', type: 'video/mp4', width: 1280, height: 720, bitrate: 2000 });
    const t = ad!.trackingEvents;
    expect(t.impression).toEqual(['http://example.com/track/impression']);
    for (const k of ['start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'] as const) expect([k, t[k].length]).toEqual([k, 1]);
    expect(t.error).toContain('http://example.com/error');
  });

  it('parses every IAB sample without throwing and finds a linear ad in each inline linear one', async () => {
    const files = readdirSync(IAB, { recursive: true }).map(String).filter((f) => f.endsWith('.xml'));
    expect(files.length).toBeGreaterThan(40);
    const results = await Promise.all(files.map(async (f) => [f, await new VastDecisionClient({ budgetMs: 300 }).fromText(iab(f), 'http://127.0.0.1:9/')] as const));
    for (const [f, r] of results) expect([f, r.ok || ['empty', 'timeout', 'http', 'malformed'].includes(r.error.reason)]).toEqual([f, true]);
    const linear = results.filter(([f]) => /Inline_Linear|Inline_Simple|Event_Tracking|Inline_LinearRegular/.test(f));
    for (const [f, r] of linear) expect([f, r.ok && r.ads.length > 0]).toEqual([f, true]);
    // Named "NonLinear" but some carry a <Linear> too: judge by content.
    const nonLinear = results.filter(([f]) => !iab(f).includes('<Linear') && !/Wrapper|Viewable/.test(f));
    for (const [f, r] of nonLinear) expect([f, r.ok ? 'ok' : r.error.reason]).toEqual([f, f.startsWith('1-2.0/vast1') ? 'malformed' : 'empty']);
    // VAST 1 (<VideoAdServingTemplate>) is outside the VAST 2–4 the issue asks for: refused as malformed.
    const vast1 = results.find(([f]) => f.endsWith('vast1RegularLinear.xml'))?.[1];
    expect(vast1?.ok ? 'ok' : vast1?.error.reason).toBe('malformed');
  });
});

describe.skipIf(!VECTORS_DIR)('VAST decisions over HTTP', () => {
  const client = new VastDecisionClient({ budgetMs: 400 });

  it('follows the IAB wrapper to the inline ad and merges the wrapper impression', async () => {
    const res = await client.decide(req('/wrapper'));
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.ads[0]?.duration).toBe(16);
    expect(res.ads[0]?.trackingEvents.impression.length).toBeGreaterThanOrEqual(2);
  });

  it('follows a chain of 5 wrappers and refuses a sixth', async () => {
    // six requests in a row: a budget a loaded machine cannot break (400 ms did once), the depth alone decides
    const patient = new VastDecisionClient({ budgetMs: 20_000 });
    const five = await patient.decide(req('/chain/5'));
    expect(five.ok ? 'ok' : five.error).toBe('ok');
    const deep = await patient.decide(req('/chain/6'));
    expect(deep.ok).toBe(false);
    expect(deep.ok ? '' : deep.error.reason).not.toBe('timeout');
  });

  it('classifies a slow ad server as timeout, within the budget for the whole chain', async () => {
    // The ad server answers after 3 s, the budget is 400 ms: 'timeout' (not an ad) shows the budget ended each chain
    // before the answer, without a wall-clock bound that a loaded machine could break.
    const direct = await client.decide(req('/slow'));
    const wrapped = await client.decide(req('/wrapper-to-slow'));
    expect(direct.ok ? 'ok' : direct.error.reason).toBe('timeout');
    expect(wrapped.ok ? 'ok' : wrapped.error.reason).toBe('timeout');
  });

  it('classifies HTTP errors, malformed XML, non-VAST XML and empty VAST', async () => {
    const reasons = await Promise.all(['/error', '/malformed', '/html', '/empty', '/nowhere'].map(async (p) => {
      const r = await client.decide(req(p));
      return r.ok ? 'ok' : `${r.error.reason}${r.error.status ? ` ${r.error.status}` : ''}`;
    }));
    expect(reasons).toEqual(['http 500', 'malformed', 'malformed', 'empty', 'http 404']);
    const refused = await new VastDecisionClient().decide({ ...req('/inline'), adServerUrl: 'http://127.0.0.1:1/vast' });
    expect(refused.ok ? 'ok' : refused.error.reason).toBe('http');
  });

  it('bounds what it reads: an answer over maxBodyBytes is malformed, an error\'s endless body is cut', async () => {
    const small = new VastDecisionClient({ maxBodyBytes: 16 * 1024, budgetMs: 60_000 });
    const large = await small.decide(req('/large'));
    expect(large.ok ? 'ok' : large.error.message).toMatch(/larger than 16384 bytes/);
    // under the default bound the same 64 KB is read whole and parsed: a VAST without ads
    const whole = await new VastDecisionClient({ budgetMs: 60_000 }).decide(req('/large'));
    expect(whole.ok ? 'ok' : whole.error.reason).toBe('empty');
    const endless = await small.decide(req('/endless-error'));
    expect(endless.ok ? 'ok' : `${endless.error.reason} ${endless.error.status}`).toBe('http 503');
    // answered at its status; the body is dropped as it comes and the connection cut once past maxBodyBytes
    for (let i = 0; i < 200 && endlessClosed === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(endlessClosed).toBe(1);
  });

  it('takes the ads of the first VMAP break and lists every break', async () => {
    const res = await client.decide(req('/vmap'));
    expect(res.ok && res.ads[0]?.adId).toBe('20001');
    const vmapText = await (await fetch(`${base}/vmap`)).text();
    const breaks = parseVmap(vmapText);
    expect(breaks?.map((b) => [b.breakId, b.timeOffset, Boolean(b.adTagUri), Boolean(b.vastXml)])).toEqual([['pre', 'start', true, false], ['mid', '00:10:00.000', false, true]]);
    expect(parseVmap('<VAST/>')).toBeUndefined();
  });
});
