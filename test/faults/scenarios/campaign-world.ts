// What the campaign's viewers watch: the live origin (real-time window, SCTE-35 cues) and the ad server, in this process
// or in a child process of their own. At bench scale they must not share an event loop with the load generator: on a
// loaded machine one process gets one share of the CPU, and 1,000 ad requests a break then took 35-47 s to answer, so
// every decision was late and no break was filled (the soak's first try). `--world <breakEveryLoops>` runs the child.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CLIP_SEGMENTS, EPOCH_MS, OriginServer, SEGMENT_SECONDS } from '../../../fixtures/origin-server.js';
import { VastServer } from '../../../fixtures/vast-server.js';

export interface CampaignWorld {
  originUrl: string;
  vastUrl: string;
  close(): Promise<void>;
}

/**
 * Keeps the origin's cue tags in one loop of `every` only: a break every `every` × 20 s. A segment's cue tags come
 * before its EXT-X-PROGRAM-DATE-TIME, which says which segment (and so which loop) it is.
 */
export function thinBreaks(body: string, every: number): string {
  if (every <= 1) return body;
  const out: string[] = [];
  let cues: string[] = [];
  for (const line of body.split('\n')) {
    if (line.startsWith('#EXT-X-CUE')) { cues.push(line); continue; }
    if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) {
      const k = Math.round((Date.parse(line.slice('#EXT-X-PROGRAM-DATE-TIME:'.length)) - EPOCH_MS) / (SEGMENT_SECONDS * 1000));
      if (Math.floor(k / CLIP_SEGMENTS) % every === 0) out.push(...cues);
      cues = [];
    }
    out.push(line);
  }
  return out.join('\n');
}

async function startHere(breakEveryLoops: number): Promise<CampaignWorld> {
  const [origin, vast] = await Promise.all([
    OriginServer.start({ cueForm: 'cue-out', realTime: true, startSeconds: (CLIP_SEGMENTS - 1) * SEGMENT_SECONDS }), VastServer.start(),
  ]);
  if (breakEveryLoops > 1) origin.rewrite = (_pathname, body) => thinBreaks(body, breakEveryLoops);
  // the ad server's request log grows with every decision: emptied now and then over a long run
  const trim = setInterval(() => { vast.requests.length = 0; }, 10_000);
  trim.unref();
  return {
    originUrl: origin.url, vastUrl: vast.url,
    close: async () => {
      clearInterval(trim);
      await Promise.all([origin.close(), vast.close()]);
    },
  };
}

/** The origin and the ad server, here or (`inChild`) in a node process of their own. */
export async function startWorld(options: { breakEveryLoops: number; inChild: boolean }): Promise<CampaignWorld> {
  if (!options.inChild) return startHere(options.breakEveryLoops);
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--world', String(options.breakEveryLoops)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  if (first.done) throw new Error('the campaign world ended before it started');
  const { originUrl, vastUrl } = JSON.parse(first.value as string) as { originUrl: string; vastUrl: string };
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    originUrl, vastUrl,
    close: async () => {
      if (child.exitCode === null) child.stdin!.end();
      await exited;
    },
  };
}

if (process.argv[2] === '--world') {
  const world = await startHere(Number(process.argv[3] ?? 1));
  process.stdout.write(`${JSON.stringify({ originUrl: world.originUrl, vastUrl: world.vastUrl })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void world.close().then(() => process.exit(0)));
}
