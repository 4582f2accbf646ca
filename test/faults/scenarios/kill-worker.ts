// Issue 32 item 3: kill -9 of the worker encoding a VOD. A cluster (api, two workers) on private stores; one clip is
// encoded undisturbed (the baseline), then the same clip again, and the worker running that encode is killed once its
// progress is in the VOD record. Measured: how long after the kill the other worker finished it, against the
// undisturbed encode; what the job, the records and DATA_DIR hold afterwards. The test asserts on the figures and on
// `evidence`; bench/faults.ts runs it with a longer clip.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { until } from '../../cluster/cluster.js';
import type { EngineProcess } from '../../helpers/engine-process.js';
import { alive, request, startOutageCluster, type OutageCluster } from '../outage-cluster.js';
import type { FaultFigures } from './fault-figures.js';

const run = promisify(execFile);

export interface KillWorkerOptions {
  /** length of the generated clip, s (the test a short one, the bench a longer one) */
  clipSeconds?: number;
  /** its frame size */
  size?: string;
  /**
   * 'kill' (kill -9, the fault) or 'stall': SIGSTOP instead, until the other worker has leased the job again,
   * then SIGCONT: a worker only slow (starved, paused), whose run must then leave the VOD to the other's
   */
  fault?: 'kill' | 'stall';
  log?: (line: string) => void;
}

/** What the test checks besides the figures: read from outside (HTTP, the database, DATA_DIR, the logs, ffprobe). */
export interface KillWorkerEvidence {
  killed: string;
  survivor: string;
  /** the VOD record after the run */
  info: { status: string; statusReason: string | null; hlsUrl: string | null; mp4Urls: string[]; duration: number | null };
  /** pg-boss rows of the encode queue for this VOD: [state, retry count] */
  jobs: Array<{ state: string; retryCount: number }>;
  /** "job started" lines of the encode job on each worker */
  startedOn: Record<string, number>;
  /** "VOD encode complete" lines of this VOD on each worker */
  completedOn: Record<string, number>;
  /** entries of DATA_DIR/media/vod/<guid> (the record's output directory only, when nothing is orphaned) */
  versionDirs: string[];
  /** the output directory of the record (relative to DATA_DIR/media) */
  outputDir: string | null;
  /** the record's URLs that point outside its output directory (must be none) */
  foreignUrls: string[];
  /** the files of DATA_DIR/uploads (the two VODs' sources) */
  uploads: string[];
  /** the stored source of the killed encode's VOD */
  sourceFile: string | null;
  /** ffmpeg processes the killed worker had started that were still running when the job was leased again */
  orphanFfmpeg: number[];
  /** ffprobe of the HLS master: duration, video streams */
  probed: { durationSec: number; videoStreams: number };
  /** the progress seen in the record when the kill was made */
  killedAtPercent: number;
  /** workers still alive that should be */
  deadSurvivors: string[];
  /** (stall) the resumed worker logged that its lease went to the other */
  revoked: boolean;
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** The child process ids of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
const running = (pid: number): boolean => {
  try {
    // a zombie (reaped by nobody yet) no longer runs: read its state
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
};

export async function killWorkerScenario(options: KillWorkerOptions = {}): Promise<FaultFigures & { evidence: KillWorkerEvidence }> {
  const log = options.log ?? (() => undefined);
  const clipSeconds = options.clipSeconds ?? 20;
  const mediaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fault-kill-worker-'));
  const cluster = await startOutageCluster({ ssai: 0, workers: 2 });
  const db = new pg.Client({ connectionString: cluster.postgres.url });
  await db.connect();
  let requestsTotal = 0;
  let requestsFailed = 0;
  const api = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    requestsTotal++;
    const answer = await request(`${cluster.balancer.url}${url}`, {
      method, headers: { 'content-type': 'application/json', ...cluster.auth, ...headers },
      ...(body instanceof Buffer ? { body } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    }, 60_000).catch(() => undefined);
    if (!answer || answer.status >= 500) requestsFailed++;
    return answer;
  };
  const info = async (guid: string): Promise<KillWorkerEvidence['info'] & { progress: { percent: number; stage: string } | null }> => {
    const answer = await api('GET', `/broker/vod/list/${guid}/info`);
    if (!answer || answer.status !== 200) throw new Error(`GET info of ${guid}: ${answer?.status} ${answer?.text}`);
    const read = JSON.parse(answer.text) as { data?: unknown };
    return (read.data ?? read) as KillWorkerEvidence['info'] & { progress: { percent: number; stage: string } | null };
  };
  const upload = async (title: string, source: string): Promise<{ guid: string; at: number }> => {
    const made = await api('POST', '/broker/vod/meta', { title });
    const guid = (JSON.parse(made!.text) as { data: { guid: string } }).data.guid;
    const at = Date.now();
    const sent = await api('POST', `/broker/vod/upload/${guid}`, fs.readFileSync(source), { 'content-type': 'video/mp4' });
    if (sent?.status !== 200) throw new Error(`upload of ${title}: ${sent?.status} ${sent?.text}`);
    return { guid, at };
  };
  const finished = (guid: string, timeoutMs: number) => until(`the encode of ${guid} to finish`, timeoutMs, async () => {
    const read = await info(guid);
    return read.status === 'complete' || read.status === 'error' ? read : undefined;
  });
  const lines = (p: EngineProcess, ...needles: string[]) => p.logs.filter((l) => needles.every((n) => l.includes(n))).length;
  try {
    const source = await generateMedia('clip', path.join(mediaDir, 'clip.mp4'), { seconds: clipSeconds, size: options.size ?? '320x180' });

    // The baseline: the same clip encoded with nothing killed.
    const baseline = await upload('undisturbed', source);
    const baselineInfo = await finished(baseline.guid, 10 * 60_000);
    if (baselineInfo.status !== 'complete') throw new Error(`the undisturbed encode failed: ${baselineInfo.statusReason}`);
    const baselineSeconds = (Date.now() - baseline.at) / 1000;
    log(`undisturbed encode: ${baselineSeconds.toFixed(1)} s`);

    const disturbed = await upload('killed mid-encode', source);
    // Killed while encoding: its progress is in the record (stage encode, past 0 %), its completion not yet.
    const progressed = await until('the encode to report progress', 5 * 60_000, async () => {
      const read = await info(disturbed.guid);
      if (read.status === 'complete' || read.status === 'error') throw new Error(`the encode ended (${read.status}) before it could be killed: use a longer clip`);
      return read.progress && read.progress.stage === 'encode' && read.progress.percent > 0 ? read.progress : undefined;
    });
    const owner = await until('the worker running the job', 30_000, async () =>
      cluster.workers.find((w) => lines(w, '"job started"', '"kind":"encode"') > lines(w, '"job finished"', '"kind":"encode"')));
    const survivor = cluster.workers.find((w) => w !== owner)!;
    const ffmpegBefore = childrenOf(owner.child.pid!);
    const survivorStarts = lines(survivor, '"job started"', '"kind":"encode"');
    const stall = options.fault === 'stall';
    const killedAt = Date.now();
    if (stall) owner.child.kill('SIGSTOP');
    else await owner.kill();
    log(`${stall ? 'stopped' : 'killed'} ${owner.name} at ${progressed.percent} %; its ffmpeg processes: ${ffmpegBefore.join(', ') || 'none'}`);
    const leasedAgain = await until('the other worker to take the job', 5 * 60_000, async () =>
      lines(survivor, '"job started"', '"kind":"encode"') > survivorStarts ? Date.now() : undefined);
    // by the time the job is leased again (a lease's TTL after the kill) the killed worker's ffmpeg must be gone too
    const orphanFfmpeg = stall ? [] : ffmpegBefore.filter(running);
    let revoked = false;
    if (stall) {
      owner.child.kill('SIGCONT');
      // it learns at its next renewal (every 5 s) that the job went to the other, and stops its run; an engine that
      // never does goes on, and what it then does to the VOD is in the evidence
      revoked = await until('the resumed worker to learn it lost the job', 30_000, async () => lines(owner, 'lost the lease of its job') > 0 ? true : undefined).catch(() => false);
    }
    const after = await finished(disturbed.guid, 10 * 60_000);
    // the resumed run waits for the other's outcome before it returns its slot: both runs over before the files are read
    if (stall && revoked) await until('the resumed worker to leave the job', 60_000, async () => lines(owner, 'waiting for that one') > 0 ? true : undefined);
    const completedAt = Date.now();
    log(`${survivor.name} took the job ${((leasedAgain - killedAt) / 1000).toFixed(1)} s after the kill, finished ${((completedAt - killedAt) / 1000).toFixed(1)} s after it`);

    // pg-boss records a job's outcome just after its handler returns (the VOD record is written inside it)
    const jobRows = async () => (await db.query<{ state: string; retry_count: number }>(
      `select state, retry_count from pgboss.job where name = 'vod-encode' and data->>'guid' = $1`, [disturbed.guid])).rows;
    const jobs = await until('the encode job to have its outcome in pg-boss', 60_000, async () => {
      const rows = await jobRows();
      return rows.some((j) => ['created', 'retry', 'active'].includes(j.state)) ? undefined : rows;
    }).catch(() => jobRows());
    const vodDir = path.join(cluster.dataDir, 'media', 'vod', disturbed.guid);
    const row = (await db.query<{ output_dir: string | null; records: string | null; source_file: string | null }>('select output_dir, records, source_file from vod_sources where id = $1', [disturbed.guid])).rows[0];
    const outputDir = row?.output_dir ?? null;
    const urls = [...(row?.records ?? '').matchAll(/"cdnUrl":"([^"]+)"/g)].map((m) => m[1]!);
    const probe = after.hlsUrl
      ? JSON.parse((await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration:stream=codec_type', '-of', 'json', after.hlsUrl], { timeout: 60_000 })).stdout) as { format: { duration: string }; streams: Array<{ codec_type: string }> }
      : { format: { duration: '0' }, streams: [] };
    const completedOn = Object.fromEntries(cluster.workers.map((w) => [w.name, lines(w, '"VOD encode complete"', disturbed.guid)]));
    const evidence: KillWorkerEvidence = {
      killed: owner.name,
      survivor: survivor.name,
      info: { status: after.status, statusReason: after.statusReason, hlsUrl: after.hlsUrl, mp4Urls: after.mp4Urls, duration: after.duration },
      jobs: jobs.map((j) => ({ state: j.state, retryCount: j.retry_count })),
      startedOn: Object.fromEntries(cluster.workers.map((w) => [w.name, lines(w, '"job started"', '"kind":"encode"')])),
      completedOn,
      versionDirs: fs.existsSync(vodDir) ? fs.readdirSync(vodDir).sort() : [],
      outputDir,
      foreignUrls: outputDir ? urls.filter((u) => !u.includes(`/media/${outputDir}/`)) : urls,
      uploads: fs.readdirSync(path.join(cluster.dataDir, 'uploads')).sort(),
      sourceFile: row?.source_file ?? null,
      orphanFfmpeg,
      probed: { durationSec: Number(probe.format.duration), videoStreams: probe.streams.filter((s) => s.codec_type === 'video').length },
      killedAtPercent: progressed.percent,
      deadSurvivors: cluster.all.filter((p) => (stall || p !== owner) && !alive(p)).map((p) => p.name),
      revoked,
    };
    const doneOnce = after.status === 'complete' && sum(completedOn) === 1 && jobs.length === 1 && jobs[0]!.state === 'completed';
    return {
      fault: stall ? 'a worker stopped (SIGSTOP) mid-encode past its lease, then resumed' : 'kill -9 of a worker mid-encode',
      recoverSeconds: (completedAt - killedAt) / 1000,
      requestsFailed,
      requestsTotal,
      // the job not completed once, or files beside the record's own output directory
      recordsLost: (doneOnce ? 0 : 1) + evidence.versionDirs.filter((d) => outputDir === null || d !== path.basename(outputDir)).length,
      details: {
        clipSeconds,
        undisturbedSeconds: Math.round(baselineSeconds * 10) / 10,
        leasedAgainSeconds: Math.round((leasedAgain - killedAt) / 100) / 10,
        completedAfterKillSeconds: Math.round((completedAt - killedAt) / 100) / 10,
        uploadToCompleteSeconds: Math.round((completedAt - disturbed.at) / 100) / 10,
        killedAtPercent: progressed.percent,
        orphanFfmpeg: evidence.orphanFfmpeg.length,
      },
      evidence,
    };
  } finally {
    await db.end().catch(() => undefined);
    await cluster.close();
    fs.rmSync(mediaDir, { recursive: true, force: true });
  }
}
