// bench/faults (issue 32): the fault campaign at full scale. Each scenario of test/faults/scenarios/ (registered below by
// name) starts its own cluster and fixtures, injects its fault under load and returns its FaultFigures; each is printed
// as a Markdown row and written to bench/results/faults.md. `--soak [minutes=60]` runs item 7 instead: viewers with
// their own ads on the campaign cluster (breaks every 2 minutes, a channel running, an upload every minute) while the
// resident memory and open file descriptors of every engine process are sampled every 10 s; it prints pass/fail for
// memory flat within 10% after warm-up, no growth of the descriptors a process holds at rest (connections clients
// opened to it aside), 0 5xx and fill >= 0.99, and writes the samples
// (bench/results/faults-soak.csv), a plot of memory over time (bench/results/faults-soak.svg) and its figures
// (bench/results/faults-soak.md).
// Usage: npx tsx bench/faults.ts [--only stores,kill-ssai] [--viewers N]
//        npx tsx bench/faults.ts --soak [minutes=60] [--viewers 2000]
// SOAK_LOG_LEVEL sets the engine processes' log level (warn); SOAK_NODE_OPTIONS their NODE_OPTIONS (e.g.
// --heapsnapshot-signal=SIGUSR2, to compare heaps over the soak).
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { privateStoresMissing } from '../test/faults/private-stores.js';
import { alive, startOutageCluster } from '../test/faults/outage-cluster.js';
import { CampaignLoad } from '../test/faults/scenarios/campaign-load.js';
import type { FaultFigures, FaultScenario } from '../test/faults/scenarios/fault-figures.js';
import { diskFullScenario, smallVolumeMissing } from '../test/faults/scenarios/disk-full.js';
import { killPackagerScenario } from '../test/faults/scenarios/kill-packager.js';
import { killSsaiScenario } from '../test/faults/scenarios/kill-ssai.js';
import { killWorkerScenario } from '../test/faults/scenarios/kill-worker.js';
import { storeRestarts } from '../test/faults/scenarios/store-restarts.js';

/** The disk scenario mounts a tmpfs: where that is not permitted it says why instead of failing half-way. */
const diskFull: FaultScenario = async (options) => {
  const missing = smallVolumeMissing();
  if (missing) throw new Error(`disk-full cannot run here: ${missing}`);
  return diskFullScenario(options);
};

/**
 * The scenarios by name, with the viewers each runs at full scale (the issue's figures where it names one). kill-ssai
 * at 1,000 viewers takes its breaks announced ahead: with no notice, a loaded 2-core machine decides too few in time
 * for the kill to fall in a filled break.
 */
const SCENARIOS: Record<string, { scenario: FaultScenario; viewers: number }> = {
  'kill-ssai': { scenario: (options) => killSsaiScenario({ ...options, cueForm: 'daterange-ahead' }), viewers: 1000 },
  'kill-packager': { scenario: killPackagerScenario, viewers: 20 },
  'kill-worker': { scenario: (options) => killWorkerScenario({ clipSeconds: 30, ...(options.log ? { log: options.log } : {}) }), viewers: 0 },
  stores: { scenario: storeRestarts, viewers: 200 },
  'disk-full': { scenario: diskFull, viewers: 0 },
};

const SAMPLE_MS = 10_000;
const UPLOAD_EVERY_MS = 60_000;
/** breaks every 6 loops of the origin's 20 s clip: every 2 minutes */
const BREAK_EVERY_LOOPS = 6;

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const loadAverage = () => os.loadavg().map((x) => x.toFixed(2)).join(' / ');
const machine = () => `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB, node ${process.version}`;

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const value = process.argv[i + 1];
  return value && !value.startsWith('--') ? value : '';
}

function row(f: FaultFigures): string {
  const details = Object.entries(f.details).map(([k, v]) => `${k} ${v}`).join(', ');
  return `| ${f.fault} | ${f.recoverSeconds === null ? '-' : `${f.recoverSeconds.toFixed(1)} s`} | ${f.requestsFailed} of ${f.requestsTotal} | ${f.recordsLost} | ${details} |`;
}

async function campaign(only: string[], viewers: number | undefined): Promise<void> {
  const unknown = only.filter((name) => !SCENARIOS[name]);
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  const lines = ['| fault | time to recover | requests failed | records lost | details |', '|---|---|---|---|---|'];
  process.stdout.write(`${lines.join('\n')}\n`);
  const loadBefore = loadAverage();
  for (const name of only) {
    const { scenario, viewers: full } = SCENARIOS[name]!;
    log(`${name}: ${viewers ?? full} viewers`);
    const figures = await scenario({ viewers: viewers ?? full, log: (line) => log(`${name}: ${line}`) });
    lines.push(row(figures));
    process.stdout.write(`${row(figures)}\n`);
  }
  const command = `npx tsx bench/faults.ts --only ${only.join(',')}${viewers ? ` --viewers ${viewers}` : ''}`;
  const markdown = `# bench/faults\n\n${new Date().toISOString()} · ${machine()} · load average ${loadBefore} before, ${loadAverage()} after (the machine is shared with other work)\n\nCommand: \`${command}\`\n\n${lines.join('\n')}\n`;
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/faults.md', markdown);
}

type Sample = { t: number; process: string; pid: number; rssKb: number; fds: number; clientFds: number; peers: string; heapKb?: number; threadHeapKb?: number };

/**
 * The JS heap in use of the main thread and of the worker threads (ssai's decisions and beacons) from a process's
 * /metrics, in kB: what of its resident memory is JavaScript. Sampled between collections, so the least of a window
 * is the nearest to what is live.
 */
async function heapOf(url: string): Promise<{ heapKb?: number; threadHeapKb?: number }> {
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(3000) });
    if (!res.ok) return {};
    const text = await res.text();
    const main = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
    let threads = 0;
    for (const m of text.matchAll(/^ssai_thread_heap_used_bytes\{[^}]*\} (\S+)$/gm)) threads += Number(m[1]);
    return { ...(main ? { heapKb: Math.round(Number(main) / 1024) } : {}), threadHeapKb: Math.round(threads / 1024) };
  } catch {
    return {};
  }
}

type TcpSocket = { localPort: number; remotePort: number; listening: boolean };
/** The TCP sockets of the machine by inode: its ports and whether it listens (/proc/net/tcp and tcp6), read once a round. */
async function tcpSockets(): Promise<Map<string, TcpSocket>> {
  const sockets = new Map<string, TcpSocket>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      sockets.set(f[9]!, { localPort: Number.parseInt(f[1]!.split(':')[1] ?? '', 16), remotePort: Number.parseInt(f[2]!.split(':')[1] ?? '', 16), listening: f[3] === '0A' });
    }
  }
  return sockets;
}

/**
 * VmRSS (kB) from /proc/<pid>/status, the entries of /proc/<pid>/fd, and of those the connections clients opened to
 * it (a socket on a port the process listens on): how many of those there are is the clients' choice (the load
 * generator's pool), so the growth check counts the process's own descriptors, the rest.
 */
async function sampleProcess(pid: number, tcp: Map<string, TcpSocket>): Promise<{ rssKb: number; fds: number; clientFds: number; peers: string } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
    const entries = await readdir(`/proc/${pid}/fd`);
    const inodes = (await Promise.all(entries.map((e) => readlink(`/proc/${pid}/fd/${e}`).catch(() => ''))))
      .map((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1]).filter((i): i is string => i !== undefined);
    const mine = inodes.map((i) => tcp.get(i)).filter((s) => s !== undefined);
    const listens = new Set(mine.filter((s) => s.listening).map((s) => s.localPort));
    // the connections clients opened apart; the process's own by the port they reach (where a growth would come
    // from: 5432, 6379, an upstream)
    let clientFds = 0;
    const byPeer = new Map<number, number>();
    for (const s of mine) {
      if (s.listening) continue;
      if (listens.has(s.localPort)) clientFds++;
      else byPeer.set(s.remotePort, (byPeer.get(s.remotePort) ?? 0) + 1);
    }
    const peers = [...byPeer].sort((a, b) => b[1] - a[1]).map(([port, n]) => `${port}:${n}`).join(' ');
    return { rssKb, fds: entries.length, clientFds, peers };
  } catch {
    return undefined;
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** A line per process of resident memory (MB) over time (minutes), with axes and a legend: a small hand-written SVG. */
function memorySvg(samples: Sample[], processes: string[], warmupS: number): string {
  const width = 760, height = 360, left = 56, right = 150, top = 20, bottom = 40;
  const maxT = Math.max(1, ...samples.map((s) => s.t));
  const maxMb = Math.max(1, ...samples.map((s) => s.rssKb / 1024)) * 1.1;
  const x = (t: number) => left + (t / maxT) * (width - left - right);
  const y = (mb: number) => top + (1 - mb / maxMb) * (height - top - bottom);
  const colours = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<line x1="${left}" y1="${y(0)}" x2="${width - right}" y2="${y(0)}" stroke="black"/>`, `<line x1="${left}" y1="${top}" x2="${left}" y2="${y(0)}" stroke="black"/>`,
    `<line x1="${x(warmupS)}" y1="${top}" x2="${x(warmupS)}" y2="${y(0)}" stroke="#999" stroke-dasharray="4 3"/>`,
    `<text x="${x(warmupS) + 3}" y="${top + 10}" fill="#666">warm-up ends</text>`,
    `<text x="${(left + width - right) / 2}" y="${height - 8}" text-anchor="middle">minutes</text>`,
    `<text x="14" y="${(top + height - bottom) / 2}" transform="rotate(-90 14 ${(top + height - bottom) / 2})" text-anchor="middle">resident memory (MB)</text>`];
  for (let i = 0; i <= 5; i++) {
    const mb = (maxMb / 5) * i;
    parts.push(`<text x="${left - 4}" y="${y(mb) + 4}" text-anchor="end">${Math.round(mb)}</text>`, `<line x1="${left}" y1="${y(mb)}" x2="${width - right}" y2="${y(mb)}" stroke="#eee"/>`);
    const t = (maxT / 5) * i;
    parts.push(`<text x="${x(t)}" y="${y(0) + 14}" text-anchor="middle">${(t / 60).toFixed(t / 60 < 10 ? 1 : 0)}</text>`);
  }
  processes.forEach((name, i) => {
    const points = samples.filter((s) => s.process === name).map((s) => `${x(s.t).toFixed(1)},${y(s.rssKb / 1024).toFixed(1)}`).join(' ');
    const colour = colours[i % colours.length];
    parts.push(`<polyline fill="none" stroke="${colour}" stroke-width="1.5" points="${points}"/>`,
      `<line x1="${width - right + 10}" y1="${top + 14 * i + 6}" x2="${width - right + 28}" y2="${top + 14 * i + 6}" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${width - right + 32}" y="${top + 14 * i + 10}">${name}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

async function soak(minutes: number, viewers: number): Promise<boolean> {
  const loadBefore = loadAverage();
  log(`soak: ${minutes} min, ${viewers} viewers; starting the campaign cluster`);
  const cluster = await startOutageCluster({ ssai: 2, workers: 2, packager: 2, logsToFiles: true, env: { NOTIFY_HTTP_LOOPBACK: 'true', LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'warn', ...(process.env.SOAK_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SOAK_NODE_OPTIONS } : {}) }, startTimeoutMs: 300_000 });
  let load: CampaignLoad | undefined;
  try {
    load = await CampaignLoad.start(cluster, { viewers, uploadEveryMs: UPLOAD_EVERY_MS, breakEveryLoops: BREAK_EVERY_LOOPS, log, worldInChild: true });
    const l = load;
    log('waiting for the first stitched break');
    // a soak whose breaks are never filled still measures memory and descriptors: the fill check then fails
    await l.waitForAds(240_000, 0).catch((error: unknown) => log(`no stitched break yet, the soak goes on: ${String(error)}`));
    const fill0 = await l.fill();
    const start = Date.now();
    const end = start + minutes * 60_000;
    // warm-up: the first fifth of the run, 5 minutes at most (caches, pools and JIT settle)
    const warmupS = Math.min(300, (minutes * 60) / 5);
    const samples: Sample[] = [];
    const processes = cluster.all.map((p) => p.name);
    while (Date.now() < end) {
      const t = Math.round((Date.now() - start) / 1000);
      const tcp = await tcpSockets();
      for (const p of cluster.all) {
        const pid = p.child.pid;
        const s = pid === undefined ? undefined : await sampleProcess(pid, tcp);
        if (s) samples.push({ t, process: p.name, pid: pid!, ...s, ...await heapOf(p.url) });
      }
      if (t % 60 < SAMPLE_MS / 1000) {
        const failed = l.failures.length;
        log(`${(t / 60).toFixed(0)} min: ${l.count('playlist', () => true)} playlists, ${failed} failed, ${l.uploads.length} uploads, rss ${cluster.all.map((p) => `${p.name} ${Math.round(([...samples].reverse().find((s) => s.process === p.name)?.rssKb ?? 0) / 1024)} MB`).join(', ')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, SAMPLE_MS - (Date.now() - start - t * 1000))));
    }
    const fill1 = await l.fill();
    const counters = await l.decisionCounters();
    log(`decisions: ${JSON.stringify(counters)}`);
    await l.stop();
    // the uploads' encodes finish and are notified (the last one uploaded shortly before the end)
    const encodes = l.uploads.map((u) => u.guid);
    const deadline = Date.now() + 180_000;
    let incomplete = encodes.length;
    while (Date.now() < deadline) {
      const statuses = await Promise.all(encodes.map((g) => l.encodeStatus(g)));
      incomplete = statuses.filter((s) => s !== 'complete').length;
      const notified = new Set(l.receiver.notifications('vod.encode.complete').map((r) => r.json.Data?.guid));
      if (incomplete === 0 && encodes.every((g) => notified.has(g))) break;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    const notified = new Set(l.receiver.notifications('vod.encode.complete').map((r) => r.json.Data?.guid));
    const notNotified = encodes.filter((g) => !notified.has(g)).length;
    const { doubled } = l.deliveries();

    // The verdicts.
    const perProcess = processes.map((name) => {
      const mine = samples.filter((s) => s.process === name);
      const after = mine.filter((s) => s.t >= warmupS);
      // the medians of the first and the last tenth after warm-up (3 samples at least): a GC's sawtooth is not a trend
      const window = Math.max(3, Math.round(after.length / 10));
      const first = after.slice(0, window), last = after.slice(-window);
      const rssStart = median(first.map((s) => s.rssKb)), rssEnd = median(last.map((s) => s.rssKb));
      const rssMax = Math.max(...after.map((s) => s.rssKb)), rssMin = Math.min(...after.map((s) => s.rssKb));
      // Descriptors: a leaked one is never closed, so it lifts what the process holds at rest (the fewest it had in a
      // window: between breaks, when the pools to the ad server, the beacons' hosts and the origin have let their idle
      // sockets go); a pool filling up to its bound during breaks is no leak, so the peaks are shown, not judged.
      const own = (s: Sample) => s.fds - s.clientFds;
      const fdsStart = Math.min(...first.map(own)), fdsEnd = Math.min(...last.map(own));
      const fdsPeakStart = Math.max(...first.map(own)), fdsPeakEnd = Math.max(...last.map(own));
      const clientFds = [Math.min(...after.map((s) => s.clientFds)), Math.max(...after.map((s) => s.clientFds))];
      // what of it is JavaScript: the least heap in use (main thread + worker threads) of each tenth, the nearest to what is live
      const jsHeap = (s: Sample) => (s.heapKb === undefined ? Number.NaN : s.heapKb + (s.threadHeapKb ?? 0));
      const heapStart = Math.min(...first.map(jsHeap)), heapEnd = Math.min(...last.map(jsHeap));
      return { name, rssStart, rssEnd, rssMax, rssMin, growth: rssEnd / rssStart - 1, fdsStart, fdsEnd, fdsPeakStart, fdsPeakEnd, clientFds, heapStart, heapEnd, alive: alive(cluster.all.find((p) => p.name === name)!) };
    });
    const fivexx = l.failures.filter((f) => f.status >= 500 || f.status === 0).length;
    const availS = fill1.availSeconds - fill0.availSeconds;
    const fill = availS > 0 ? (fill1.filledSeconds - fill0.filledSeconds) / availS : Number.NaN;
    const checks = [
      { what: 'resident memory flat within 10% after warm-up (every process)', pass: perProcess.every((p) => p.growth <= 0.10), figure: perProcess.map((p) => `${p.name} ${(p.growth * 100).toFixed(1)}%`).join(', ') },
      // (+2: a socket opening or closing at the moment of a sample)
      { what: 'no file descriptor growth (every process: its own descriptors at rest, first tenth → last)', pass: perProcess.every((p) => p.fdsEnd <= p.fdsStart + 2), figure: perProcess.map((p) => `${p.name} ${p.fdsStart}→${p.fdsEnd}`).join(', ') },
      { what: '0 5xx (and no unanswered request)', pass: fivexx === 0, figure: `${fivexx} of ${l.count(undefined, () => true)}` },
      { what: 'fill >= 0.99', pass: fill >= 0.99, figure: `${fill.toFixed(4)} (${(fill1.filledSeconds - fill0.filledSeconds).toFixed(0)} of ${availS.toFixed(0)} avail s)` },
      { what: 'every upload encoded and notified once', pass: incomplete === 0 && notNotified === 0 && doubled === 0, figure: `${encodes.length} uploads, ${incomplete} not complete, ${notNotified} not notified, ${doubled} notified twice` },
      { what: 'no process exited', pass: perProcess.every((p) => p.alive), figure: perProcess.filter((p) => !p.alive).map((p) => p.name).join(', ') || 'none' },
      { what: 'the channel ran on (its segments never went backwards)', pass: l.channelRegressions === 0 && l.count('channel', (s) => s === 200) > 0, figure: `${l.count('channel', (s) => s === 200)} playlists read, last segment ${l.channelLastSegment}, ${l.channelRegressions} regressions` },
    ];
    const byKind = ['playlist', 'segment', 'channel', 'api', 'upload'].map((k) => `${k} ${l.count(k as never, () => true)}`).join(', ');
    const command = `npx tsx bench/faults.ts --soak ${minutes} --viewers ${viewers}`;
    const markdown = [
      '# bench/faults --soak', '',
      `${new Date().toISOString()} · ${machine()} · load average ${loadBefore} before, ${loadAverage()} after (the machine is shared with other engineers' tests)`, '',
      `Command: \`${command}\``, '',
      `${viewers} viewers, each its own session and ads (reload every 2 s, new ad segments fetched), breaks every 2 minutes, a channel on a packager read every 2 s, an upload every minute; api, 2 ssai, 2 workers, 2 packagers on private PostgreSQL and Redis. Requests: ${byKind}. Samples every ${SAMPLE_MS / 1000} s; warm-up ${warmupS} s.`, '',
      '| check | result | measured |', '|---|---|---|',
      ...checks.map((c) => `| ${c.what} | ${c.pass ? 'pass' : 'FAIL'} | ${c.figure} |`), '',
      '| process | RSS after warm-up, median of the first tenth (MB) | RSS at the end, median of the last tenth (MB) | min / max after warm-up (MB) | JS heap in use (all threads), least of the first tenth → last (MB) | own fds at rest: first tenth → last (fewest) | own fds at peak: first tenth → last (most) | connections from clients, min–max after warm-up |', '|---|---|---|---|---|---|---|---|',
      ...perProcess.map((p) => `| ${p.name} | ${(p.rssStart / 1024).toFixed(0)} | ${(p.rssEnd / 1024).toFixed(0)} | ${(p.rssMin / 1024).toFixed(0)} / ${(p.rssMax / 1024).toFixed(0)} | ${Number.isFinite(p.heapStart) ? `${(p.heapStart / 1024).toFixed(0)} → ${(p.heapEnd / 1024).toFixed(0)}` : 'n/a'} | ${p.fdsStart} → ${p.fdsEnd} | ${p.fdsPeakStart} → ${p.fdsPeakEnd} | ${p.clientFds[0]}–${p.clientFds[1]} |`), '',
      `Decisions over the whole run (both ssai processes): ${Object.entries(counters).map(([k, v]) => `\`${k}\` ${v}`).join(', ')}.`, '',
      'Memory over time: [faults-soak.svg](faults-soak.svg); samples: [faults-soak.csv](faults-soak.csv).', '',
    ].join('\n');
    process.stdout.write(markdown);
    await mkdir('bench/results', { recursive: true });
    await writeFile('bench/results/faults-soak.csv', `t_s,process,pid,rss_kb,heap_kb,thread_heap_kb,fds,client_fds,peer_ports\n${samples.map((s) => `${s.t},${s.process},${s.pid},${s.rssKb},${s.heapKb ?? ''},${s.threadHeapKb ?? ''},${s.fds},${s.clientFds},${s.peers}`).join('\n')}\n`);
    await writeFile('bench/results/faults-soak.svg', memorySvg(samples, processes, warmupS));
    await writeFile('bench/results/faults-soak.md', markdown);
    return checks.every((c) => c.pass);
  } finally {
    await load?.close();
    await cluster.close();
  }
}

async function main(): Promise<number> {
  const missing = privateStoresMissing();
  if (missing) throw new Error(`bench/faults needs private stores: ${missing}`);
  const viewers = argument('--viewers');
  const soakArg = argument('--soak');
  if (soakArg !== undefined) return (await soak(Number(soakArg || 60), Number(viewers || 2000))) ? 0 : 2;
  const only = argument('--only');
  await campaign(only ? only.split(',') : Object.keys(SCENARIOS), viewers ? Number(viewers) : undefined);
  return 0;
}

main().then((code) => process.exit(code), (error: unknown) => {
  process.stderr.write(`bench/faults failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
