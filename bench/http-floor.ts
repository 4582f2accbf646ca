// bench/http-floor (issue 28 point 2): what HTTP itself costs a playlist server on this machine, before any SSAI logic.
// At a break the engine's main thread answers ~7,500 requests a second (playlists and segment redirects) and runs near
// saturation; node:http and its socket writes are about half of that thread. This bench answers one question for the
// next step: how much of a request's cost is node:http's JavaScript (request and reply objects, streams, events) and
// how much the kernel's (the read, the write, the loopback delivery), by answering the same playlist-sized reply from
// node:http and from a bare node:net responder that parses only a keep-alive GET (no routing, no headers read: the
// floor of any JavaScript HTTP server on Node). Same open-loop load for both (the C generator of bench/ssai-capacity,
// one reload per viewer every 2 s at its own phase), alternated so that a drift of the machine shows.
// Usage: npx tsx bench/http-floor.ts [viewers=10000] [seconds=20] [rounds=2] → bench/results/http-floor.{md,json}
import { createServer } from 'node:http';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import { buildNativeLoad, runNativeLoad } from './lib/native-load.js';

const viewers = Number(process.argv[2] ?? 10_000);
const seconds = Number(process.argv[3] ?? 20);
const rounds = Number(process.argv[4] ?? 2);
const RAMP_SECONDS = 5;
const PERIOD_MS = 2000;

/** A live media playlist of six 2 s segments with absolute URIs: the size of what the proxy answers (~500 B). */
const BODY = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:100\n${Array.from({ length: 6 }, (_, i) => `#EXTINF:2.000,\nhttps://origin.example.com/live/stream/segment-${100 + i}.ts\n`).join('')}`;
/** The headers the proxy sends with a playlist (CORS, type, caching, length). */
const HEADERS = ['content-type', 'application/vnd.apple.mpegurl', 'access-control-allow-origin', '*', 'cache-control', 'no-cache', 'content-length', String(Buffer.byteLength(BODY))];

function nodeHttp(): net.Server {
  return createServer((_req, res) => {
    res.writeHead(200, HEADERS);
    res.end(BODY);
  });
}

/** Keep-alive GETs only: each complete head in the buffer gets the reply; every reply of one read goes in one write. */
function bareNet(): net.Server {
  const head = `HTTP/1.1 200 OK\r\n${HEADERS.reduce((t, v, i) => (i % 2 ? `${t}: ${v}\r\n` : t + v), '')}Connection: keep-alive\r\n`;
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      let out = '';
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        pending = pending.slice(end + 4);
        out += `${head}Date: ${new Date().toUTCString()}\r\n\r\n${BODY}`;
      }
      if (out) socket.write(out, 'latin1');
    });
    socket.on('error', () => undefined);
  });
}

type Figures = { server: string; sent: number; errors: number; p50Ms: number; p99Ms: number; cores: number; usPerRequest: number };

async function measure(server: string, make: () => net.Server, binary: string): Promise<Figures> {
  const listening = make();
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  const { port } = listening.address() as net.AddressInfo;
  const paths = Array.from({ length: viewers }, (_, i) => `/v1/manifest/g/viewer-${i}/0.m3u8`);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await runNativeLoad(binary, `http://127.0.0.1:${port}`, paths, { seconds, rampSeconds: RAMP_SECONDS, periodMs: PERIOD_MS, connections: 256, segments: false }) as {
    sent: number; errors: number; p50Ms: number; p99Ms: number; ramp?: { sent: number };
  };
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  await new Promise((resolve) => listening.close(resolve));
  const cpuUs = cpu.user + cpu.system;
  const requests = r.sent + (r.ramp?.sent ?? 0);
  return { server, sent: r.sent, errors: r.errors, p50Ms: r.p50Ms, p99Ms: r.p99Ms, cores: Math.round((cpuUs / 1000 / wallMs) * 1000) / 1000, usPerRequest: Math.round((cpuUs / Math.max(1, requests)) * 10) / 10 };
}

async function main(): Promise<void> {
  const binary = await buildNativeLoad();
  if (!binary) throw new Error('bench/http-floor needs the C load generator (a C compiler: apt-get install -y gcc)');
  const runs: Figures[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const [name, make] of [['node:http', nodeHttp], ['node:net, bare GET parsing', bareNet]] as const) {
      const figures = await measure(name, make, binary);
      runs.push(figures);
      process.stderr.write(`${JSON.stringify(figures)}\n`);
    }
  }
  const date = new Date().toISOString();
  const command = `npx tsx bench/http-floor.ts ${viewers} ${seconds} ${rounds}`;
  const load = os.loadavg().map((x) => Math.round(x * 100) / 100).join('/');
  await writeFile('bench/results/http-floor.json', `${JSON.stringify({ bench: 'http-floor', date, command, viewers, seconds, runs }, null, 2)}\n`);
  await writeFile('bench/results/http-floor.md', `# bench/http-floor\n\n${date} · ${os.cpus().length}× ${os.cpus()[0]?.model ?? ''} · Node ${process.version} · load average ${load} after\n\n`
    + `Command: \`${command}\`\n\n`
    + `Method: ${viewers} viewers, one reload every ${PERIOD_MS / 1000} s each at its own phase (${viewers / (PERIOD_MS / 1000)} requests a second, open loop, the C generator of bench/ssai-capacity over 256 keep-alive connections), ${seconds} s after a ${RAMP_SECONDS} s ramp; each server answers a ${Buffer.byteLength(BODY)}-byte playlist with the proxy's headers. CPU: this process (the server) over the ramp and the run, by the requests answered. The servers alternate, round by round.\n\n`
    + '| server | requests | errors | p50 ms | p99 ms | cores | CPU µs/request |\n|---|---|---|---|---|---|---|\n'
    + runs.map((f) => `| ${f.server} | ${f.sent} | ${f.errors} | ${f.p50Ms} | ${f.p99Ms} | ${f.cores} | ${f.usPerRequest} |`).join('\n')
    + '\n');
  process.exit(0);
}

await main();
