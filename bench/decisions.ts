// bench/decisions (issue 28 point 2): the CPU one personal ad decision costs the thread that makes it, the ad server in
// another process (fixtures/vast-server.ts, /vast-viewer: two inline ads with the viewer's own ids and tracking URLs).
// At 10,000 viewers a break with no notice asks for ~10,000 decisions within seconds on a niced decision thread: what
// each costs decides how many are made in time on a busy machine.
//   client: VastDecisionClient.decideUrl, as the decision thread runs it (the agent's dispatch, the inline VAST reader);
//   request(): the ad server asked as before (undici request() with an AbortController's signal and a budget timer,
//   the body read by async iteration), then the same reader (fromText): the baseline, from the same run;
//   thread: the client on a decision thread (ThreadedDecisionClient), as the engine runs it: what a decision costs the
//   main thread (the one answering playlists) is the asks and answers crossing.
// 64 decisions in flight, each way four rounds alternating after a warm-up; reported: CPU µs per decision of the
// process and of its main thread.
// Usage: npx tsx bench/decisions.ts [decisions=4000]
import { spawn } from 'node:child_process';
import { request } from 'undici';
import { VastDecisionClient } from '../ssai/decide/vast-decision.js';
import { ThreadedDecisionClient } from '../ssai/decide/decision-threads.js';
import { threadCpuMs } from '../ssai/decide/thread-times.js';

const N = Number(process.argv[2] ?? 4000);
const IN_FLIGHT = 64;

/** CPU ms of this process's main thread (its task id is the pid), from /proc: utime + stime in 10 ms ticks. */
const mainThreadCpuMs = (): number => threadCpuMs(process.pid) ?? Number.NaN;

async function measure(base: string, n: number, one: (url: string) => Promise<void>): Promise<{ cpuUs: number; mainUs: number; wallMs: number }> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMs();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < n) await one(`${base}/vast-viewer?sid=viewer-${next++}`);
  }));
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: Math.round(((cpu.user + cpu.system) / n) * 10) / 10, mainUs: Math.round(((mainThreadCpuMs() - main0) * 1000 / n) * 10) / 10, wallMs: Math.round(performance.now() - t0) };
}

async function main(): Promise<void> {
  const server = spawn(process.execPath, ['--import', 'tsx', '-e',
    "import('./fixtures/vast-server.ts').then(async ({ VastServer }) => { const v = await VastServer.start(); setInterval(() => { v.requests.length = 0; }, 1000); console.log(v.url); })"],
  { stdio: ['ignore', 'pipe', 'inherit'] });
  const base = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
  const client = new VastDecisionClient({});
  const threaded = new ThreadedDecisionClient({ threads: 1 });
  const ways: Record<string, (url: string) => Promise<void>> = {
    client: async (url) => {
      const r = await client.decideUrl(url);
      if (!r.ok || r.ads.length !== 2) throw new Error(`a decision failed: ${JSON.stringify(r)}`);
    },
    'request()': async (url) => {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new DOMException('ad server budget spent', 'TimeoutError')), 3000);
      try {
        const r = await request(url, { method: 'GET', headersTimeout: 3000, bodyTimeout: 3000, signal: abort.signal });
        const chunks: Buffer[] = [];
        for await (const chunk of r.body) chunks.push(chunk as Buffer);
        const d = await client.fromText(Buffer.concat(chunks).toString('utf8'), url);
        if (r.statusCode !== 200 || !d.ok || d.ads.length !== 2) throw new Error(`the ad server answered ${r.statusCode}`);
      } finally {
        clearTimeout(timer);
      }
    },
    thread: async (url) => {
      const r = await threaded.decide({ adServerUrl: url, sessionId: 'viewer', availIndex: 0, availDuration: 30 });
      if (!r.ok || r.ads.length !== 2) throw new Error(`a decision failed: ${JSON.stringify(r)}`);
    },
  };
  for (const one of Object.values(ways)) await measure(base, Math.min(N, 2000), one); // warm-up: JIT, sockets
  const rows: string[] = [];
  for (let round = 1; round <= 4; round++) {
    for (const [name, one] of Object.entries(ways)) {
      const r = await measure(base, N, one);
      rows.push(`| ${name} | ${round} | ${r.cpuUs} | ${r.mainUs} | ${r.wallMs} |`);
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    }
  }
  server.kill();
  await threaded.close();
  process.stdout.write(`# bench/decisions\n\n${new Date().toISOString()} · node ${process.version}\n\nCommand: \`npx tsx bench/decisions.ts ${N}\`\n\n`
    + `| way | round | process CPU µs per decision | main thread CPU µs per decision | wall ms for ${N} |\n|---|---|---|---|---|\n${rows.join('\n')}\n`);
}

main().then(() => process.exit(0), (e: unknown) => {
  process.stderr.write(`bench/decisions failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
