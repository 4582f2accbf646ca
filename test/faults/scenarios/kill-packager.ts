// Issue 32, item 2: kill -9 of the packager running a channel. Two packagers share DATA_DIR and the database; players
// read the channel's media playlist through the balancer; the owner is killed; the survivor's sweep takes the channel
// over (packager.part.ts) and resumes it with the same numbering. Measured from outside: who owns it (channel_owners),
// what every player saw of the playlist (discontinuities, media sequence numbers, segments once listed), the alarm the
// outage left, the archive's record of the hole.
import fs from 'node:fs';
import path from 'node:path';
import HLS from 'hls-parser';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { STALE_MS } from '../../../kernel/seams/channel-commands.js';
import { decodeLive, tinyBlueprint } from '../../e2e/live/live-helpers.js';
import { sleep, until, untilChannel, type ChannelDetail } from '../../cluster/cluster.js';
import { alive, request, startOutageCluster, type OutageCluster } from '../outage-cluster.js';
import type { FaultFigures, FaultScenarioOptions } from './fault-figures.js';

export interface KillPackagerOptions extends FaultScenarioOptions {
  /** segments to watch after the first new one (the playlist must go on growing) */
  segmentsAfter?: number;
}

export interface OutageAlarm {
  code: string;
  message: string;
  active: boolean;
  raisedDateTime: string;
  clearedDateTime?: string;
}

export interface KillPackagerFigures extends FaultFigures {
  /** what the checks of the test read, beside the numbers */
  evidence: {
    ownerBefore: string;
    ownerAfter: string;
    killedPid: number;
    /** discontinuities among the segments listed after the last one seen before the kill */
    discontinuitiesAfterKill: number;
    /** media sequence numbers whose segment changed (another URI, duration or discontinuity) between two reads */
    changedSegments: string[];
    /** reads whose first media sequence number, or discontinuity sequence, was below an earlier read's */
    sequenceRegressions: number;
    lastSequenceBefore: number;
    lastSequenceAfter: number;
    outageAlarms: OutageAlarm[];
    /** DATA_DIR/media/archives/<id>.json after the stop */
    /** the merged MP4 is there */
    archiveFile: boolean;
    archiveRecord: { seconds: number; segments: number; gaps: Array<{ atSeconds: number; seconds: number; from: string; to: string; reason: string }> } | undefined;
    decodeErrors: string;
    decodedSec: number;
    targetDuration: number;
  };
}

interface Seen {
  uri: string;
  duration: number;
  discontinuity: boolean;
}

/** A player: reloads the media playlist every second, fetches the newest segment, remembers every segment it saw. */
class PlaylistWatcher {
  readonly seen = new Map<number, Seen>();
  readonly changed: string[] = [];
  regressions = 0;
  requests = 0;
  /** requests that failed once and were retried (the ones in flight to the killed process) */
  retried = 0;
  failed = 0;
  private lastFirst = -1;
  private lastDiscontinuitySequence = -1;
  /** media sequence number → wall clock of the first read that listed it */
  readonly firstListedAt = new Map<number, number>();
  targetDuration = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly url: string) {}

  start(): void {
    this.loop = (async () => {
      while (!this.stopped) {
        await this.read();
        await sleep(1000);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  get lastSequence(): number {
    return Math.max(-1, ...this.seen.keys());
  }

  /** the first segment numbered above `after` with a discontinuity before it (where the channel resumed), and when it was first listed */
  firstDiscontinuityAfter(after: number): { seq: number; at: number } | undefined {
    const seqs = [...this.seen.keys()].filter((seq) => seq > after && this.seen.get(seq)!.discontinuity);
    if (seqs.length === 0) return undefined;
    const seq = Math.min(...seqs);
    return { seq, at: this.firstListedAt.get(seq)! };
  }

  /** a GET as a player makes it: one retry after half a second (hls.js retries playlist and segment loads too) */
  private async get(url: string): Promise<string | undefined> {
    this.requests++;
    for (let attempt = 0; attempt < 2; attempt++) {
      if (attempt > 0) {
        this.retried++;
        await sleep(500);
      }
      const answer = await request(url, {}, 5000).catch(() => undefined);
      if (answer?.status === 200) return answer.text;
    }
    this.failed++;
    return undefined;
  }

  private async read(): Promise<void> {
    const text = await this.get(this.url);
    if (text === undefined) return;
    const at = Date.now();
    const playlist = HLS.parse(text);
    if (playlist.isMasterPlaylist) throw new Error('expected a media playlist');
    this.targetDuration = playlist.targetDuration;
    const first = playlist.mediaSequenceBase ?? 0;
    const discontinuitySequence = playlist.discontinuitySequenceBase ?? 0;
    if (first < this.lastFirst || discontinuitySequence < this.lastDiscontinuitySequence) this.regressions++;
    this.lastFirst = Math.max(this.lastFirst, first);
    this.lastDiscontinuitySequence = Math.max(this.lastDiscontinuitySequence, discontinuitySequence);
    playlist.segments.forEach((segment, i) => {
      const seq = first + i;
      const now: Seen = { uri: segment.uri, duration: segment.duration, discontinuity: Boolean(segment.discontinuity) };
      const before = this.seen.get(seq);
      if (!before) {
        this.seen.set(seq, now);
        this.firstListedAt.set(seq, at);
      } else if (before.uri !== now.uri || before.duration !== now.duration || before.discontinuity !== now.discontinuity) {
        this.changed.push(`#${seq}: ${JSON.stringify(before)} became ${JSON.stringify(now)}`);
      }
    });
    const newest = playlist.segments.at(-1);
    if (newest) await this.get(new URL(newest.uri, this.url).toString());
  }
}

/** Runs the fault at the scale given (viewers: players reading the playlist) on a cluster of its own; cleans up. */
export async function killPackagerScenario(options: KillPackagerOptions): Promise<KillPackagerFigures> {
  const log = options.log ?? (() => undefined);
  const cluster = await startOutageCluster({ ssai: 0, workers: 0, packager: 2 });
  const watchers: PlaylistWatcher[] = [];
  try {
    return await run(cluster, options, log, watchers);
  } finally {
    await Promise.all(watchers.map((w) => w.stop()));
    await cluster.close();
  }
}

async function run(cluster: OutageCluster, options: KillPackagerOptions, log: (line: string) => void, watchers: PlaylistWatcher[]): Promise<KillPackagerFigures> {
  const api = async (method: string, url: string, body?: unknown) => {
    const answer = await request(`${cluster.balancer.url}${url}`, { method, headers: { 'content-type': 'application/json', ...cluster.auth }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: answer.status, body: answer.text ? JSON.parse(answer.text) : undefined };
  };
  // the MP4 input reads its clip on the shared volume
  await generateMedia('clip', path.join(cluster.dataDir, 'test-media/sample.mp4'), { seconds: 4, size: '320x180' });
  const blueprint = tinyBlueprint('mp4-loop-test');
  blueprint.createArchives = true; // spec 3.3: the archive must show the hole
  const created = await api('POST', '/workflows', { name: 'Packager takeover', blueprint });
  if (created.status !== 200) throw new Error(`workflow: ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  const started = await api('POST', '/channels', { workflows: [id] });
  if (started.status !== 200) throw new Error(`start: ${JSON.stringify(started.body)}`);
  const detail = async () => (await api('GET', `/channels/${id}`)).body as ChannelDetail;
  const running = await untilChannel(detail, 'RUNNING', 'START_FAILED', 90_000);
  const ownerOf = async () => (await cluster.postgres.query<{ packager_id: string }>('select packager_id from channel_owners where workflow_id = $1', [id]))[0]?.packager_id;
  const ownerBefore = await until('the channel owned by a packager', 30_000, ownerOf);
  const victim = cluster.packagers.find((p) => ownerBefore.includes(`-${p.child.pid}-`));
  const survivor = cluster.packagers.find((p) => p !== victim);
  if (!victim || !survivor) throw new Error(`no packager process matches the owner ${ownerBefore}`);
  log(`channel ${id} runs on ${victim.name} (pid ${victim.child.pid})`);

  // the first rendition's media playlist, read through the balancer as a player does
  const multivariantUrl = running.outputs![0]!.url;
  const multivariant = HLS.parse((await request(multivariantUrl)).text);
  if (!multivariant.isMasterPlaylist) throw new Error('expected a multivariant playlist');
  const mediaUrl = new URL(multivariant.variants[0]!.uri, multivariantUrl).toString();
  for (let i = 0; i < Math.max(1, options.viewers); i++) watchers.push(new PlaylistWatcher(mediaUrl));
  for (const w of watchers) w.start();
  const reference = watchers[0]!;
  await until('the players to see a few segments', 30_000, async () => (reference.seen.size >= 3 ? true : undefined));

  const lastSequenceBefore = reference.lastSequence;
  const killedAt = Date.now();
  const killedPid = victim.child.pid!;
  await victim.kill();
  log(`killed ${victim.name} (pid ${killedPid}) after media sequence ${lastSequenceBefore}`);

  const ownerAfter = await until('the survivor to own the channel', 60_000, async () => {
    const owner = await ownerOf();
    return owner && owner !== ownerBefore && owner.includes(`-${survivor.child.pid}-`) ? owner : undefined;
  });
  const back = await until('the first segment after the hole', 60_000, async () => reference.firstDiscontinuityAfter(lastSequenceBefore));
  const recoverSeconds = (back.at - killedAt) / 1000;
  log(`the first new segment was listed ${recoverSeconds.toFixed(1)} s after the kill`);
  // playable again: a decoder reads the output through the balancer, from the multivariant playlist down
  const decoded = await decodeLive(multivariantUrl, 2);
  const firstNew = back.seq;
  const segmentsAfter = options.segmentsAfter ?? 2;
  await until(`${segmentsAfter} more segments`, 60_000, async () => (reference.lastSequence >= firstNew + segmentsAfter ? true : undefined));

  const outageAlarms = await until('the outage alarm cleared', 30_000, async () => {
    const items = (await api('GET', `/channels/${id}/alarms?history=true`)).body.items as OutageAlarm[];
    const outage = items.filter((a) => a.code === 'CHANNEL_OUTAGE');
    return outage.length > 0 && outage.every((a) => !a.active) ? outage : undefined;
  });
  await Promise.all(watchers.map((w) => w.stop()));

  // the stop merges the archive on the survivor; its record beside it lists the hole
  const stopped = await api('DELETE', '/channels', { workflows: [id] });
  if (stopped.status !== 200) throw new Error(`stop: ${JSON.stringify(stopped.body)}`);
  const done = await untilChannel(detail, 'DONE', 'STOP_FAILED', 120_000);
  log(`stopped: archive ${JSON.stringify(done.archive)}; media/archives: ${fs.readdirSync(path.join(cluster.dataDir, 'media', 'archives'), { withFileTypes: false }).join(', ')}`);
  const recordFile = path.join(cluster.dataDir, 'media', 'archives', `${id}.json`);
  const archiveFile = fs.existsSync(path.join(cluster.dataDir, 'media', 'archives', `${id}.mp4`));
  const archiveRecord = fs.existsSync(recordFile) ? JSON.parse(fs.readFileSync(recordFile, 'utf8')) as KillPackagerFigures['evidence']['archiveRecord'] : undefined;

  const changedSegments = watchers.flatMap((w) => w.changed);
  const sequenceRegressions = watchers.reduce((sum, w) => sum + w.regressions, 0);
  const discontinuitiesAfterKill = [...reference.seen].filter(([seq, s]) => seq > lastSequenceBefore && s.discontinuity).length;
  const requestsTotal = watchers.reduce((sum, w) => sum + w.requests, 0);
  const requestsFailed = watchers.reduce((sum, w) => sum + w.failed, 0);
  if (!alive(survivor)) throw new Error(`the survivor exited:\n${survivor.logs.slice(-15).join('\n')}`);
  return {
    fault: 'kill -9 of the packager running a channel',
    recoverSeconds,
    requestsFailed,
    requestsTotal,
    recordsLost: changedSegments.length + sequenceRegressions,
    details: {
      viewers: watchers.length,
      retried: watchers.reduce((sum, w) => sum + w.retried, 0),
      staleMs: STALE_MS,
      recoverBeyondStaleSeconds: Math.round((recoverSeconds - STALE_MS / 1000) * 10) / 10,
      targetDuration: reference.targetDuration,
      outageReportedSeconds: Number(/off air for ([\d.]+) s/.exec(outageAlarms[0]?.message ?? '')?.[1] ?? NaN),
      archiveGaps: archiveRecord?.gaps.length ?? 0,
      discontinuities: discontinuitiesAfterKill,
    },
    evidence: {
      ownerBefore, ownerAfter, killedPid, discontinuitiesAfterKill, changedSegments, sequenceRegressions,
      lastSequenceBefore, lastSequenceAfter: reference.lastSequence, outageAlarms, archiveFile, archiveRecord,
      decodeErrors: decoded.errors, decodedSec: decoded.decodedSec, targetDuration: reference.targetDuration,
    },
  };
}
