// bench/linear: virtual channel media playlist requests per second, side by side with a bare node:http server returning
// the same playlist text in the same run (issue 15 "bench/"; same method as bench/ssai: autocannon in a child process,
// two alternating runs per target, mean reported). Plus the cost of one uncached window + render on a channel with a
// year of hourly listings (what a request costs once per second and track when the cache turns over).
// Usage: npx tsx bench/linear.ts [seconds=8]
import { cannonChild as runChild, type Load } from './lib/autocannon-child.js';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { makeAsset } from '../packager/linear/asset.js';
import { expandSources, makeProgram } from '../packager/linear/program.js';
import { renderMedia } from '../packager/linear/render.js';
import { Timeline, type Block } from '../packager/linear/timeline.js';
import { startTestEngine } from '../test/helpers/engine.js';
import type { VodRecords } from '../vod-encoder/records.types.js';

const seconds = Number(process.argv[2] ?? 8);
const CONNECTIONS = 50;

const cannonChild = (url: string, paths: string[]): Promise<Load> => runChild(url, paths, { connections: CONNECTIONS, seconds });

/** A VOD as the encoder leaves it on disk (playlists only: the bench never fetches a segment): n × 4 s and a tail. */
async function syntheticVod(mediaDir: string, outputDir: string, segments: number, tail: number): Promise<void> {
  const dir = path.join(mediaDir, outputDir, 'cmaf');
  await mkdir(dir, { recursive: true });
  const media = (rep: number) => ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-PLAYLIST-TYPE:VOD', '#EXT-X-TARGETDURATION:4', '#EXT-X-MEDIA-SEQUENCE:1', `#EXT-X-MAP:URI="init_${rep}.m4s"`,
    ...Array.from({ length: segments }, (_, i) => [`#EXTINF:${i === segments - 1 ? tail.toFixed(6) : '4.000000'},`, `chunk_${rep}_${String(i + 1).padStart(5, '0')}.m4s`]).flat(), '#EXT-X-ENDLIST', ''].join('\n');
  await writeFile(path.join(dir, 'media_0.m3u8'), media(0));
  await writeFile(path.join(dir, 'media_1.m3u8'), media(1));
  await writeFile(path.join(dir, 'media_2.m3u8'), media(2));
  await writeFile(path.join(dir, 'master.m3u8'), ['#EXTM3U', '#EXT-X-VERSION:7', '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="group_A1",NAME="audio_1",DEFAULT=YES,URI="media_2.m3u8"',
    '#EXT-X-STREAM-INF:BANDWIDTH=5500000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2",AUDIO="group_A1"', 'media_0.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=3300000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="group_A1"', 'media_1.m3u8', ''].join('\n'));
}

const engine = await startTestEngine({ env: { LOG_LEVEL: 'silent' } });
const org = engine.defaultOrganizationId;
const vod = engine.ctx.services.vod!;
const auth = { Authorization: (await engine.login()).IdToken };
const guids: string[] = [];
for (const [i, minutes] of [30, 45, 22].entries()) {
  const guid = randomUUID();
  await vod.store.create(org, guid, { type: 'source', title: `film ${i}` }, true);
  const outputDir = `vod/${guid}/bench`;
  await syntheticVod(vod.mediaDir, outputDir, minutes * 15, 2.5);
  const records = { formats: { hasHls: true, hls: { variants: [] } }, durationSec: minutes * 60 - 1.5 } as unknown as VodRecords;
  await vod.store.complete(guid, outputDir, records, { percent: 100, speedX: 1, etaSec: 0, stage: 'done' });
  guids.push(guid);
}
const ad = randomUUID();
await vod.store.create(org, ad, { type: 'source', title: 'house ad' }, true);
await syntheticVod(vod.mediaDir, `vod/${ad}/bench`, 8, 4);
await vod.store.complete(ad, `vod/${ad}/bench`, { formats: { hasHls: true, hls: { variants: [] } }, durationSec: 32 } as unknown as VodRecords, { percent: 100, speedX: 1, etaSec: 0, stage: 'done' });
const playlist = (await engine.api('POST', '/broker/playlists', { headers: auth, body: { name: 'evening', sources: guids.map((g) => ({
  guid: g, type: 'source', ads: [{ start: 600, guid: ad, substitute: 0 }, { start: 1200, guid: ad, substitute: 1 }],
})) } })).body.guid as string;
const channel = (await engine.api('POST', '/broker/channels', { headers: auth, body: { name: 'bench', description: '', active: 1, type: 'virtual', hasAds: 0, loopInterval: 24 } })).body.guid as string;
// Hourly listings from a week ago to a week ahead: playlists, one VOD alone, and an hour of slate every day.
const hour = Math.floor(Date.now() / 3_600_000) * 3600;
const start = hour - 7 * 86_400;
const listings = Array.from({ length: 14 * 24 }, (_, i) => ({
  start: start + i * 3600, end: start + (i + 1) * 3600, title: `hour ${i}`,
  ...(i % 24 === 5 ? {} : i % 3 === 0 ? { vod: guids[i % 3]! } : { playlist }),
}));
const put = await engine.api('POST', '/broker/listings/multiple', { headers: auth, body: { channel, start, end: start + 14 * 86_400, listings } });
if (put.status !== 200) throw new Error(`listings: ${JSON.stringify(put.body)}`);
const playbackUrl = (await engine.api('GET', `/broker/channels/${channel}`, { headers: auth })).body.data.playbackUrl as string;
const mediaPath = new URL(playbackUrl).pathname.replace('master.m3u8', 'v0.m3u8');
const sample = await (await fetch(`${engine.url}${mediaPath}`)).text();
if (!sample.includes('#EXTINF')) throw new Error(`no segments in ${sample}`);

const bare = http.createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' }); res.end(sample); });
await new Promise<void>((r) => bare.listen(0, '127.0.0.1', () => r()));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

const loadavg = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
const loadBefore = loadavg();
const linearRuns: Load[] = [];
const bareRuns: Load[] = [];
for (let run = 0; run < 2; run++) {
  bareRuns.push(await cannonChild(bareUrl, [mediaPath]));
  linearRuns.push(await cannonChild(engine.url, [mediaPath]));
}
const loadAfter = loadavg();
const mean = (runs: Load[]): Load => ({
  rps: Math.round(runs.reduce((t, r) => t + r.rps, 0) / runs.length), p50Ms: runs.reduce((t, r) => t + r.p50Ms, 0) / runs.length,
  p90Ms: runs.reduce((t, r) => t + r.p90Ms, 0) / runs.length, p99Ms: runs.reduce((t, r) => t + r.p99Ms, 0) / runs.length,
  requests: runs.reduce((t, r) => t + r.requests, 0), errors: runs.reduce((t, r) => t + r.errors, 0),
});
const linear = mean(linearRuns);
const baseline = mean(bareRuns);

// Uncached: a year of hourly listings (8 760 blocks), one window + render per iteration at a moving clock.
const asset = makeAsset('film', [{ bandwidth: 1, uris: Array.from({ length: 450 }, (_, i) => `s${i}.m4s`), durations: Array.from({ length: 450 }, (_, i) => (i === 449 ? 2.5 : 4)) }], undefined);
const adAsset = makeAsset('ad', [{ bandwidth: 1, uris: ['a0', 'a1'], durations: [4, 4] }], undefined);
const program = makeProgram(expandSources([{ asset, ads: [{ start: 600, asset: adAsset, substitute: 0 }] }, { asset }]));
const slate = makeProgram(expandSources([{ asset: adAsset }]));
const yearStart = Date.now() - 365 * 86_400_000;
const blocks: Block[] = Array.from({ length: 365 * 24 }, (_, i) => ({ start: yearStart + i * 3_600_000, end: yearStart + (i + 1) * 3_600_000, program, offset: 0 }));
const built = performance.now();
const timeline = new Timeline({ blocks, slate, loopMs: 86_400_000 });
const buildMs = performance.now() - built;
const pick = (a: typeof asset) => a.variants[0];
const N = 20_000;
const t0 = performance.now();
let bytes = 0;
for (let i = 0; i < N; i++) bytes += renderMedia(timeline.window(Date.now() - 3_600_000 + i * 997, 15, 68_000), pick, 4).length;
const renderUs = ((performance.now() - t0) * 1000) / N;

const ratio = Math.round((linear.rps / baseline.rps) * 1000) / 1000;
const result = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadAverageBefore: loadBefore, loadAverageAfter: loadAfter },
  method: `autocannon, ${CONNECTIONS} connections, ${seconds} s per target, loopback, from a child node process; two alternating runs per target, mean reported. Target: GET of a virtual channel's v0.m3u8 (15 segments, 2 renditions + audio, 336 hourly listings over two weeks, playlists with ad positions, a VOD alone, daily slate, 24 h loop) on the engine's /linear path; baseline: a bare node:http server returning the same playlist text`,
  goal: { ratio: 0.5 },
  linear, baseline, ratio,
  runs: linearRuns.map((l, i) => ({ linear: l, baseline: bareRuns[i]!, ratio: Math.round((l.rps / bareRuns[i]!.rps) * 1000) / 1000 })),
  uncached: { listings: blocks.length, timelineBuildMs: Math.round(buildMs * 10) / 10, windowAndRenderUs: Math.round(renderUs * 10) / 10, playlistBytes: Math.round(bytes / N) },
};
await mkdir('bench/results', { recursive: true });
await writeFile('bench/results/linear.json', JSON.stringify(result, null, 2) + '\n');
const row = (name: string, l: Load) => `| ${name} | ${l.rps} | ${l.p50Ms} | ${l.p90Ms} | ${l.p99Ms} | ${l.errors} |\n`;
await writeFile('bench/results/linear.md', `# bench/linear\n\n${result.date} · ${result.machine.cpus}× ${result.machine.model} · Node ${result.machine.node} · load average ${loadBefore.join('/')} before, ${loadAfter.join('/')} after\n\n`
  + `Command: \`npm run bench:linear -- ${seconds}\`\n\nMethod: ${result.method}.\n\n`
  + '| target | req/s | p50 ms | p90 ms | p99 ms | errors |\n|---|---|---|---|---|---|\n'
  + row('virtual channel media playlist (mean of 2)', linear) + row('bare node:http, same text (mean of 2)', baseline)
  + result.runs.map((r, i) => row(`  run ${i + 1}: linear`, r.linear) + row(`  run ${i + 1}: bare`, r.baseline)).join('')
  + `\n| figure | measured | goal |\n|---|---|---|\n| req/s ratio | ${ratio} | ≥ 0.5 |\n`
  + `| uncached window + render, a year of hourly listings | ${result.uncached.windowAndRenderUs} µs (timeline built in ${result.uncached.timelineBuildMs} ms) | once per second and track |\n`);
process.stdout.write(JSON.stringify(result, null, 2) + '\n');
bare.close();
await engine.close();
