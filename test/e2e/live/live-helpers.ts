// Shared by the live channel end-to-end tests: tiny catalog blueprints, workflows through the API, a bounded decode.
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import HLS from 'hls-parser';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { catalogBlueprint, live } from '../../api/live/live-helpers.js';
import type { TestEngine } from '../../helpers/engine.js';

type Json = Record<string, any>;

/** A catalog blueprint made cheap for a shared machine: 2 s segments, renditions at 320x180 / 160x90, 15 fps. */
export function tinyBlueprint(id: string, edit?: (channel: Json, blueprint: Json) => void): Json {
  const blueprint = catalogBlueprint(id) as Json;
  for (const section of Object.values(blueprint.components as Record<string, Json>)) {
    const channel = section.channel;
    if (!channel) continue;
    const settings = channel.encoderSettings;
    for (const group of settings.outputGroups) {
      const hls = group.outputGroupSettings?.hlsGroupSettings;
      if (hls) hls.segmentLength = 2;
    }
    settings.videoDescriptions.forEach((video: Json, i: number) => {
      video.width = i === 0 ? 320 : 160;
      video.height = i === 0 ? 180 : 90;
      Object.assign(video.codecSettings.h264Settings, { bitrate: i === 0 ? 300_000 : 120_000, framerateNumerator: 15, framerateDenominator: 1 });
    });
    for (const audio of settings.audioDescriptions) audio.codecSettings.aacSettings.bitrate = 64_000;
    edit?.(channel, blueprint);
  }
  return blueprint;
}

/** A short looping clip inside the engine's data dir, as the MP4 input reads it. */
export async function loopClip(engine: TestEngine, name = 'test-media/sample.mp4', seconds = 4): Promise<string> {
  await generateMedia('clip', path.join(engine.dataDir, name), { seconds, size: '320x180' });
  return name;
}

export async function createWorkflow(engine: TestEngine, auth: Record<string, string>, blueprint: Json, name = 'Live test'): Promise<string> {
  const answer = await engine.api('POST', '/workflows', { headers: auth, body: { blueprint, name } });
  if (answer.status !== 200) throw new Error(`workflow creation failed: ${JSON.stringify(answer.body)}`);
  return answer.body.id as string;
}

export async function startAndSettle(engine: TestEngine, auth: Record<string, string>, id: string): Promise<Json> {
  const answer = await engine.api('POST', '/channels', { headers: auth, body: { workflows: [id] } });
  if (answer.status !== 200) throw new Error(`start failed: ${JSON.stringify(answer.body)}`);
  await live(engine).channels.settled();
  return (await engine.api('GET', `/channels/${id}`, { headers: auth })).body as Json;
}

export async function stopAndSettle(engine: TestEngine, auth: Record<string, string>, id: string): Promise<Json> {
  await engine.api('DELETE', '/channels', { headers: auth, body: { workflows: [id] } });
  await live(engine).channels.settled();
  return (await engine.api('GET', `/channels/${id}`, { headers: auth })).body as Json;
}

/** Decodes `seconds` of a live HLS URL with ffmpeg; errors is ffmpeg's error log (empty when clean). */
export function decodeLive(url: string, seconds: number): Promise<{ errors: string; decodedSec: number; exitCode: number }> {
  return new Promise((resolve) => {
    execFile('ffmpeg', ['-nostdin', '-v', 'error', '-i', url, '-t', String(seconds), '-f', 'null', '-progress', 'pipe:1', '-'],
      { maxBuffer: 16 * 1024 * 1024, timeout: 60_000 }, (err, stdout, stderr) => {
        const times = [...stdout.matchAll(/out_time_us=(\d+)/g)].map((m) => Number(m[1]));
        resolve({ errors: stderr.trim(), decodedSec: (times.at(-1) ?? 0) / 1e6, exitCode: err ? 1 : 0 });
      });
  });
}

/** true while a process with this pid exists. */
export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A protected pull origin: forwards GETs to `target` when they carry these Basic credentials; counts what it refused. */
export async function basicAuthGate(target: string, user: string, password: string): Promise<{ url: string; refused: number; served: number; close(): Promise<void> }> {
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const gate = { url: '', refused: 0, served: 0, close: async () => undefined as void };
  const server = http.createServer(async (req, res) => {
    if (req.headers.authorization !== expected) {
      gate.refused += 1;
      res.writeHead(401, { 'www-authenticate': 'Basic realm="source"' }).end();
      return;
    }
    gate.served += 1;
    try {
      const upstream = await fetch(`${target}${req.url ?? '/'}`);
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch {
      // the target went away (its channel stopped first): the puller sees a gateway error, not a hung request
      res.writeHead(502).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  gate.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gate.close = () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); });
  return gate;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type MediaPlaylist = Extract<ReturnType<typeof HLS.parse>, { isMasterPlaylist: false }>;

/** A live media playlist, parsed with hls-parser. */
export async function mediaPlaylist(url: string): Promise<MediaPlaylist> {
  const parsed = HLS.parse(await (await fetch(url)).text());
  if (parsed.isMasterPlaylist) throw new Error(`expected a media playlist at ${url}`);
  return parsed;
}

/** Polls `probe` every 500 ms (its errors count as "not yet") until it gives a value; fails naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(500);
  }
  throw new Error(`timed out waiting for ${what}`);
}
