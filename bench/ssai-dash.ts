// bench/ssai-dash: a DASH VOD viewer's MPD through the proxy (issue 33 item 5), every viewer its own session and own
// ads (ad server /vast-viewer?sid=[session.id]), against a bare node:http server returning an MPD of the same size.
// A player fetches a VOD MPD once, so two figures: sessions opened per second (each request without a session id makes
// a session, asks the ad server for its break and writes its MPD) and MPD requests per second of existing sessions
// (each answer the viewer's own, its session id spliced into the shared stitched MPD's Buffer pieces).
// The origin: the engine's own 16 s CMAF encode (fixtures/dash-origin.ts) with one SCTE-35 cue, a 10 s break at 4 s
// filled by the viewer's two ads (6 s + 4 s): content, ad, ad, content.
// Usage: npx tsx bench/ssai-dash.ts [seconds=6] [viewers=1000] [rounds=3]
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { cannonChild, type Load } from './lib/autocannon-child.js';
import { DashOrigin } from '../fixtures/dash-origin.js';
import { VastServer } from '../fixtures/vast-server.js';
import { encodeScte35 } from '../media/scte35-encoder.js';
import { startEngineWith } from '../test/ssai/setup.js';

const seconds = Number(process.argv[2] ?? 6);
const viewers = Number(process.argv[3] ?? 1000);
const rounds = Math.max(1, Number(process.argv[4] ?? 3));
const CONNECTIONS = 50;
const MPD_PATH = 'vod/cmaf/cues.mpd';

const origin = await DashOrigin.start();
const cue = encodeScte35({ command: 'splice_insert', insert: { spliceEventId: 7, outOfNetwork: true, breakDuration: 10 * 90_000, autoReturn: true, availNum: 1, availsExpected: 1 } }).base64;
const originMpd = (await readFile(path.join(origin.dir, 'vod/cmaf/manifest.mpd'), 'utf8')).replace(/(<Period[^>]*>)/, `$1
<EventStream schemeIdUri="urn:scte:scte35:2014:xml+bin" timescale="1000"><Event presentationTime="4000" duration="10000" id="1"><Signal xmlns="http://www.scte.org/schemas/35/2016"><Binary>${cue}</Binary></Signal></Event></EventStream>`);
origin.overrides.set(`/${MPD_PATH}`, originMpd);
const vast = await VastServer.start();
// the product's decision deadline (the test setup waits minutes for a creative being prepared)
const engine = await startEngineWith({ originCacheMs: undefined, decisionDeadlineMs: 1500, env: { LOG_LEVEL: 'silent' } });
const auth = { Authorization: (await engine.login()).IdToken };
const created = await engine.api('POST', '/broker/adinserts', { headers: auth, body: { name: 'bench', type: 'broker', ad_server: `${vast.url}/vast-viewer?sid=[session.id]`, source_url: `${origin.url}/` } });
const guid = created.body.guid as string;
const openPath = `/v1/dash/${guid}/${MPD_PATH}`;

const sidOf = (text: string): string | undefined => /\/v1\/segment\/[^/]+\/([^/]+)\//.exec(text)?.[1];
async function open(): Promise<{ sid: string; text: string; headers: Headers }> {
  const res = await fetch(`${engine.url}${openPath}`);
  const text = await res.text();
  const sid = sidOf(text);
  if (res.status !== 200 || !sid) throw new Error(`a viewer's MPD has no ads (${res.status}): ${text.slice(0, 300)}`);
  return { sid, text, headers: res.headers };
}
// The creatives are prepared on the first decisions (ffmpeg, longer than the deadline: those viewers get the content
// alone): viewers are opened until one has its ads, outside the figures.
for (let tries = 0; ; tries++) {
  const text = await (await fetch(`${engine.url}${openPath}`)).text();
  if (sidOf(text)) break;
  if (tries >= 120) throw new Error('the creatives were not prepared within 2 minutes');
  await new Promise((r) => setTimeout(r, 1000));
}
const first = await open();
const periods = (first.text.match(/<Period /g) ?? []).length;
if (periods !== 4) throw new Error(`the viewer's MPD has ${periods} Periods, not content, two ads, content`);
const sids: string[] = [];
for (let i = 0; i < viewers; i++) sids.push((await open()).sid);
const viewerPaths = sids.map((sid) => `${openPath}?sessionId=${sid}`);
// each viewer's ads are its own: its tracking lists the ad server's beacons of that viewer (the MPD names no ad id)
const tracking = await (await fetch(`${engine.url}/v1/tracking/${guid}/${sids[1]}`)).text();
if (!tracking.includes(`-${sids[1]}`) || tracking.includes(`-${sids[2]}`)) throw new Error(`a viewer's tracking does not list its own ads: ${tracking.slice(0, 300)}`);

// The bare server answers the first viewer's MPD, the same bytes with the proxy's own headers (CORS, which a player in
// a browser needs; content type; no-store, as a viewer's MPD is its own; content length), as a server of a ready
// file would: the headers and body made once, one writeHead and one end per request.
const again = await fetch(`${engine.url}${openPath}?sessionId=${first.sid}`);
const firstBytes = Buffer.from(await again.arrayBuffer());
if (firstBytes.toString('utf8') !== first.text) throw new Error('a viewer\'s MPD asked again differs from its first');
const NODE_OWN = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
const bareHeaders: string[] = [];
again.headers.forEach((v, k) => { if (!NODE_OWN.has(k)) bareHeaders.push(k, v); });
if (!bareHeaders.includes('content-length')) throw new Error(`the proxy's MPD has no content-length: ${bareHeaders.join(' ')}`);
const bare = http.createServer((_req, res) => { res.writeHead(200, bareHeaders); res.end(firstBytes); });
await new Promise<void>((r) => bare.listen(0, '127.0.0.1', () => r()));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

// each run's CPU time in this process (the proxy's, or the bare server's) per request answered: a figure that other
// work on the machine shifts less than requests per second
type Run = Load & { cpuUsPerRequest: number };
const run = async (url: string, paths: string[]): Promise<Run> => {
  const cpu0 = process.cpuUsage();
  const load = await cannonChild(url, paths, { connections: CONNECTIONS, seconds });
  const cpu = process.cpuUsage(cpu0);
  return { ...load, cpuUsPerRequest: Math.round((cpu.user + cpu.system) / Math.max(1, load.requests)) };
};
const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
const loadBefore = loadavg();
const asked = () => vast.requests.filter((r) => r.path === '/vast-viewer').length;
// Other work on the machine shifts single runs: the bare server and the MPD requests alternate, `rounds` times, in
// ABBA order (bare first in odd rounds, the proxy first in even ones), each round's ratio its own pair's.
const baselineRuns: Run[] = [await run(bareUrl, ['/manifest.mpd'])];
const askedBefore = asked();
const sessions = await run(engine.url, [openPath]);
const decided = asked() - askedBefore;
vast.requests.length = 0; // the fixture's request log, grown by a request per session
// BENCH_PROFILE=file.cpuprofile: a CPU profile of this process (the proxy) during the first MPD run, for DevTools
const profiler = process.env.BENCH_PROFILE ? new Session() : undefined;
// Every viewer's MPD asked once more before the rounds (not measured): a viewer's MPD asked again within a minute is
// rendered from what its last answer remembered (dash-playback.ts ViewerMpd); the viewers opened long before (on a
// loaded machine opening them takes tens of seconds) would otherwise all take the whole path in the first round
for (let i = 0; i < viewerPaths.length; i += CONNECTIONS) await Promise.all(viewerPaths.slice(i, i + CONNECTIONS).map(async (p) => (await fetch(`${engine.url}${p}`)).arrayBuffer()));
const mpdRuns: Run[] = [];
const pairs: Array<{ mpd: Run; baseline: Run; ratio: number }> = [];
const ratio = (a: Load, b: Load) => Math.round((a.rps / b.rps) * 1000) / 1000;
for (let i = 0; i < rounds; i++) {
  const proxyRun = async (): Promise<Run> => {
    if (profiler && i === 0) { profiler.connect(); await profiler.post('Profiler.enable'); await profiler.post('Profiler.start'); }
    const r = await run(engine.url, viewerPaths);
    if (profiler && i === 0) {
      const { profile } = await profiler.post('Profiler.stop');
      await writeFile(process.env.BENCH_PROFILE!, JSON.stringify(profile));
      profiler.disconnect();
    }
    return r;
  };
  // round 0 reuses the bare run made before the sessions run
  const b = i === 0 ? baselineRuns[0]! : i % 2 ? await run(bareUrl, ['/manifest.mpd']) : undefined;
  const m = await proxyRun();
  const baselineOf = b ?? await run(bareUrl, ['/manifest.mpd']);
  if (i > 0) baselineRuns.push(baselineOf);
  mpdRuns.push(m);
  pairs.push({ mpd: m, baseline: baselineOf, ratio: ratio(m, baselineOf) });
}
const loadAfter = loadavg();
const mean = (runs: Run[]): Run => ({
  rps: Math.round(runs.reduce((t, r) => t + r.rps, 0) / runs.length),
  p50Ms: runs.reduce((t, r) => t + r.p50Ms, 0) / runs.length,
  p90Ms: runs.reduce((t, r) => t + r.p90Ms, 0) / runs.length,
  p99Ms: runs.reduce((t, r) => t + r.p99Ms, 0) / runs.length,
  requests: runs.reduce((t, r) => t + r.requests, 0),
  errors: runs.reduce((t, r) => t + r.errors, 0),
  cpuUsPerRequest: Math.round(runs.reduce((t, r) => t + r.cpuUsPerRequest, 0) / runs.length),
});
const baseline = mean(baselineRuns);
const mpds = mean(mpdRuns);
const sortedRatios = pairs.map((p) => p.ratio).sort((a, b) => a - b);
const medianRatio = sortedRatios[Math.floor(sortedRatios.length / 2)]!;

const result = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, memoryGb: Math.round(os.totalmem() / 2 ** 30), loadAverageBefore: loadBefore, loadAverageAfter: loadAfter },
  method: `autocannon in a child node process, ${CONNECTIONS} connections, ${seconds} s per target, loopback. Origin: the engine's 16 s CMAF encode (2 video rungs, AAC, sidecar WebVTT; SegmentTemplate with SegmentTimeline) with one SCTE-35 cue, a 10 s break at 4 s; ad server (in the engine's process) /vast-viewer: two ads per viewer with the viewer's own ad ids and tracking URLs; the viewer's MPD has 4 Periods (${firstBytes.length} bytes). Sessions: GET of the MPD without a session id, each a new session asking the ad server for its break (decision deadline 1.5 s). MPD requests: GET of the MPD of ${viewers} existing sessions cycled (each answer that viewer's own: its session id in the ad segments' URLs), every viewer's MPD asked once before the rounds (a viewer asked again within a minute takes the remembered path; past that the whole path once). Baseline: a bare node:http server in the same process returning one viewer's MPD, the same bytes with the proxy's headers (${bareHeaders.filter((_, i) => i % 2 === 0).join(', ')}). The baseline and the MPD requests alternate ${rounds} times in ABBA order; a round's ratio is its pair's, the figure the median of the rounds' (sessions once: the ratio is to the mean baseline). CPU µs per request: this process's user + system time during a run over the requests answered`,
  goals: { mpdRatio: 0.5 },
  mpdBytes: firstBytes.length,
  baseline,
  sessions: { ...sessions, ratio: ratio(sessions, baseline), adServerRequests: decided },
  mpdRequests: { ...mpds, ratio: medianRatio, meanRatio: ratio(mpds, baseline), runs: pairs },
};
await mkdir('bench/results', { recursive: true });
await writeFile('bench/results/ssai-dash.json', JSON.stringify(result, null, 2) + '\n');
const row = (name: string, l: Run) => `| ${name} | ${l.rps} | ${l.p50Ms} | ${l.p90Ms} | ${l.p99Ms} | ${l.cpuUsPerRequest} | ${l.errors} |\n`;
await writeFile('bench/results/ssai-dash.md', `# bench/ssai-dash\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · ${result.machine.memoryGb} GB · Node ${result.machine.node} · load average ${loadBefore.join('/')} before, ${loadAfter.join('/')} after (other work shared the machine)\n\n`
  + `Command: \`npm run bench:ssai-dash -- ${seconds} ${viewers} ${rounds}\`\n\nMethod: ${result.method}.\n\n`
  + '| target | req/s | p50 ms | p90 ms | p99 ms | CPU µs/req | errors |\n|---|---|---|---|---|---|---|\n'
  + row('sessions opened (new session, ad decision, MPD)', sessions)
  + row(`MPD requests of ${viewers} sessions with their own ads (mean of ${rounds})`, mpds)
  + row(`bare node:http, the same MPD bytes and headers (mean of ${rounds})`, baseline)
  + pairs.map((p, i) => row(`  round ${i + 1}: MPD requests (ratio ${p.ratio})`, p.mpd) + row(`  round ${i + 1}: bare`, p.baseline)).join('')
  + '\n| figure | measured | goal |\n|---|---|---|\n'
  + `| MPD requests / bare req/s (median of the rounds' ratios) | ${medianRatio} (rounds: ${pairs.map((p) => p.ratio).join(', ')}) | ≥ 0.5 |\n`
  + `| sessions opened / bare req/s | ${result.sessions.ratio} | (measured to know) |\n`
  + `| ad server requests during the sessions run | ${decided} for ${sessions.requests} sessions | one per session |\n`);
process.stdout.write(JSON.stringify(result, null, 2) + '\n');
bare.close();
await engine.close();
await origin.close();
await vast.close();
process.exit(0);
