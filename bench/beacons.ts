// bench/beacons (issue 28 point 2): the CPU a server-side beacon costs the engine, and on which thread. At 10,000 viewers
// with their segments a break fires thousands of beacons a second; every microsecond of them on the thread that answers
// playlists is taken from the playlists. Sends N beacons to a tracker in another process (a bare node:http answering
// 204), 100 queued per turn of the event loop as a break's segment redirects queue them, three ways:
//   request: undici request() and body.dump() per beacon (how beacons went out before, the baseline);
//   dispatch: BeaconDelivery, the agent's dispatch with a handler that drops the body (no stream, no promise);
//   thread: the same on the beacon thread (ThreadedBeaconDelivery): the URLs cross in batches.
// Reported: CPU µs per beacon of this process's main thread and of the whole process, wall time. Each way runs twice,
// alternating, after a warm-up.
// Usage: npx tsx bench/beacons.ts [beacons=20000]
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { BeaconDelivery, type BeaconTransport } from '../ssai/serve/beacon-delivery.js';
import { ThreadedBeaconDelivery } from '../ssai/serve/beacon-thread.js';

const N = Number(process.argv[2] ?? 20_000);
const BATCH = 100;

/** The former way: request() and a dumped body per beacon, 16 at a time, on the calling thread. */
class RequestDelivery implements BeaconTransport {
  private readonly agent = new Agent({ headersTimeout: 2000, bodyTimeout: 2000, connections: 32 });
  private queue: string[] = [];
  private running = 0;
  private waiters: Array<() => void> = [];
  send(items: readonly string[]): void {
    this.queue.push(...items);
    this.pump();
  }
  private pump(): void {
    while (this.running < 16 && this.queue.length) {
      const url = this.queue.shift()!;
      this.running++;
      void request(url, { dispatcher: this.agent }).then((r) => r.body.dump(), () => undefined).finally(() => {
        this.running--;
        this.pump();
        if (!this.running && !this.queue.length) for (const w of this.waiters.splice(0)) w();
      });
    }
  }
  idle(): Promise<void> {
    return !this.running && !this.queue.length ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
  close(): Promise<void> {
    return this.agent.close();
  }
}

/** CPU ms of this process's main thread (its task id is the pid), from /proc: utime + stime in 10 ms ticks. */
async function mainThreadCpuMs(): Promise<number> {
  const fields = (await readFile(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function measure(delivery: BeaconTransport, base: string, n: number): Promise<{ mainUs: number; processUs: number; wallMs: number }> {
  const cpu0 = process.cpuUsage();
  const main0 = await mainThreadCpuMs();
  const t0 = performance.now();
  for (let i = 0; i < n; i += BATCH) {
    delivery.send(Array.from({ length: Math.min(BATCH, n - i) }, (_, k) => `${base}/track/start/ad-a-viewer-${i + k}?cb=${i + k}`));
    await new Promise((r) => setImmediate(r));
  }
  await delivery.idle();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const mainMs = (await mainThreadCpuMs()) - main0;
  return { mainUs: Math.round((mainMs * 1000) / n * 10) / 10, processUs: Math.round(((cpu.user + cpu.system) / n) * 10) / 10, wallMs: Math.round(wallMs) };
}

async function main(): Promise<void> {
  const tracker = spawn(process.execPath, ['-e', "const s=require('node:http').createServer((q,r)=>{r.writeHead(204);r.end()});s.keepAliveTimeout=30000;s.listen(0,'127.0.0.1',()=>console.log(s.address().port))"], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => tracker.stdout!.once('data', (d) => resolve(String(d).trim())));
  const base = `http://127.0.0.1:${port}`;
  // One of each for the whole run, as the engine keeps one: the thread's start (its loader, its JIT) is paid in the
  // warm-up, as an engine pays it once.
  const ways: Record<string, BeaconTransport> = {
    request: new RequestDelivery(),
    dispatch: new BeaconDelivery({}),
    thread: new ThreadedBeaconDelivery({}),
  };
  for (const delivery of Object.values(ways)) await measure(delivery, base, Math.min(N, 5000)); // warm-up: JIT, sockets, the thread's start
  const rows: string[] = [];
  for (let round = 0; round < 2; round++) {
    for (const [name, delivery] of Object.entries(ways)) {
      const r = await measure(delivery, base, N);
      rows.push(`| ${name} | ${round + 1} | ${r.mainUs} | ${r.processUs} | ${r.wallMs} |`);
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    }
  }
  for (const delivery of Object.values(ways)) await delivery.close();
  tracker.kill();
  process.stdout.write(`# bench/beacons\n\n${new Date().toISOString()} · node ${process.version}\n\nCommand: \`npx tsx bench/beacons.ts ${N}\`\n\n`
    + `| way | run | main thread CPU µs per beacon | process CPU µs per beacon | wall ms for ${N} |\n|---|---|---|---|---|\n${rows.join('\n')}\n`);
}

main().then(() => process.exit(0), (e: unknown) => {
  process.stderr.write(`bench/beacons failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
