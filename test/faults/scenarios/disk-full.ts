// Issue 32, item 5: the disk of DATA_DIR full. One engine (api, worker and packager roles: the disk is what is shared,
// not the processes) on PRIVATE PostgreSQL, its DATA_DIR a small tmpfs volume. With a channel running and an upload in
// progress, a file is written until ENOSPC; then the space is freed, filled again for the channel's stop (its archive
// merge), freed again. Asserted from outside: HTTP answers, the VOD's record, the channel's alarms and status, files.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import HLS from 'hls-parser';
import { generateMedia } from '../../../fixtures/generate-media.js';
import { tinyBlueprint } from '../../e2e/live/live-helpers.js';
import { CLUSTER_ADMIN, until, untilChannel } from '../../cluster/cluster.js';
import { startEngineProcess, type EngineProcess } from '../../helpers/engine-process.js';
import { request } from '../outage-cluster.js';
import { PrivatePostgres } from '../private-stores.js';
import type { FaultFigures, FaultScenarioOptions } from './fault-figures.js';

export const VOLUME_MB = 64;

/** Why a small volume cannot be mounted here (not root, no tmpfs, a container without CAP_SYS_ADMIN), or undefined. */
export function smallVolumeMissing(): string | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return `the disk-full fault needs to mount a small tmpfs volume (root, CAP_SYS_ADMIN): ${stderr || String(error)}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `file` until the volume is full (ENOSPC); returns the bytes it holds. Call again to top it up. */
export function fillVolume(file: string): number {
  const chunk = Buffer.alloc(1024 * 1024, 0x55);
  const fd = fs.openSync(file, 'a');
  try {
    for (;;) {
      try {
        fs.writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        // the last megabyte did not fit: fill the rest byte-exact, so not even a small file fits
        for (let size = 65_536; size >= 1; size = Math.floor(size / 2)) {
          try {
            for (;;) fs.writeSync(fd, chunk.subarray(0, size));
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
          }
        }
        return fs.fstatSync(fd).size;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

export interface DiskFullFigures extends FaultFigures {
  evidence: {
    /** the upload cut off by the full disk: its answer */
    uploadInProgress: { status: number; body: Record<string, unknown> | undefined };
    /** an upload started while full */
    uploadWhileFull: { status: number; body: Record<string, unknown> | undefined };
    /** a tus upload created while full */
    tusWhileFull: { status: number; body: Record<string, unknown> | undefined };
    /** the VOD's record after each failed upload */
    vodAfterFailure: { status: string; statusReason: string | null };
    diskFullAlarm: { code: string; message: string; active: boolean } | undefined;
    /** the channel once space was back: alarm cleared, the playlist growing */
    alarmClearedAfterFree: boolean;
    playlistGrewAfterFree: boolean;
    /** the stop on a full disk (its archive merge) */
    stopOnFullDisk: { channelStatus: string; statusReason: string | null };
    /** files that say complete but are not: an archive without its merge done, partial files left */
    halfWritten: string[];
    /** VOD records `complete` while a file they name is missing or empty */
    completeButTruncated: string[];
    /** after the space is freed */
    uploadAfterFree: number;
    vodAfterFree: { status: string; statusReason: string | null };
    stopAfterFree: { channelStatus: string };
    /** the engine stayed up */
    engineAlive: boolean;
  };
}

/** Runs the fault on an engine of its own, its DATA_DIR a tmpfs of VOLUME_MB; unmounts and cleans up. */
export async function diskFullScenario(options: FaultScenarioOptions): Promise<DiskFullFigures> {
  const log = options.log ?? (() => undefined);
  const mountDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-diskfull-'));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-diskfull-src-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${VOLUME_MB}m`, 'tmpfs', mountDir]);
  let postgres: PrivatePostgres | undefined;
  let engine: EngineProcess | undefined;
  try {
    postgres = await PrivatePostgres.start();
    engine = await startEngineProcess('engine', {
      DATABASE_URL: postgres.url, DATA_DIR: mountDir, ENGINE_ROLES: 'api,worker,packager', RTMP_PORT: '0', LOG_LEVEL: 'info',
      ENGINE_SECRET_KEY: randomBytes(32).toString('base64'), ENGINE_ADMIN_EMAIL: CLUSTER_ADMIN.email, ENGINE_ADMIN_PASSWORD: CLUSTER_ADMIN.password,
    });
    try {
      return await run(engine, postgres, mountDir, scratch, options, log);
    } catch (error) {
      // what the engine said is the first thing to read when this fault goes wrong
      throw new Error(`${error instanceof Error ? error.message : String(error)}\nengine log:\n${engine.logs.slice(-40).join('\n')}`, { cause: error });
    }
  } finally {
    await engine?.stop();
    await postgres?.close();
    try {
      execFileSync('umount', [mountDir]);
    } catch {
      execFileSync('umount', ['-l', mountDir]); // something still holds it open: detach it now, gone once released
    }
    fs.rmSync(mountDir, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A POST on a connection of its own (none is reused after an answer given before the body was read): `body` whole, or
 * dribbled in (64 KiB every 50 ms, up to `dribble` bytes) until the server answers.
 */
function upload(url: string, headers: Record<string, string>, body: Buffer | { dribble: number }): Promise<{ status: number; body: Record<string, unknown> | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { ...headers, 'content-type': 'video/mp4', connection: 'close' } });
    let answered = false;
    let timer: NodeJS.Timeout | undefined;
    if (Buffer.isBuffer(body)) req.end(body);
    else {
      let sent = 0;
      timer = setInterval(() => {
        if (answered) return;
        if (sent >= body.dribble) {
          clearInterval(timer);
          req.end();
          return;
        }
        req.write(randomBytes(65_536));
        sent += 65_536;
      }, 50);
    }
    req.setTimeout(60_000, () => req.destroy(new Error('the upload got no answer within 60 s')));
    req.on('response', (res) => {
      answered = true;
      clearInterval(timer);
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) as Record<string, unknown> : undefined });
      });
    });
    req.on('error', (error) => { clearInterval(timer); if (!answered) reject(error); });
  });
}

async function run(engine: EngineProcess, postgres: PrivatePostgres, dataDir: string, scratch: string, options: FaultScenarioOptions, log: (line: string) => void): Promise<DiskFullFigures> {
  let requestsTotal = 0;
  let requestsFailed = 0;
  const login = await request(`${engine.url}/auth/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CLUSTER_ADMIN) });
  const auth = { Authorization: (JSON.parse(login.text) as { data: { IdToken: string } }).data.IdToken };
  const api = async (method: string, url: string, body?: unknown) => {
    const answer = await request(`${engine.url}${url}`, { method, headers: { 'content-type': 'application/json', ...auth }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: answer.status, body: answer.text ? JSON.parse(answer.text) : undefined };
  };
  const vodInfo = async (guid: string) => (await api('GET', `/broker/vod/list/${guid}/info`)).body.data as { status: string; statusReason: string | null };
  const channel = async (id: string) => (await api('GET', `/channels/${id}`)).body as { channelStatus: string; statusReason: string | null; outputs: Array<{ url: string }>; [field: string]: unknown };
  const alarms = async (id: string) => (await api('GET', `/channels/${id}/alarms?history=true`)).body.items as Array<{ code: string; message: string; active: boolean }>;
  const filler = path.join(dataDir, 'filler.bin');

  // the channel's clip lives on the volume (the MP4 input reads it there); the upload's source outside it
  await generateMedia('clip', path.join(dataDir, 'test-media/sample.mp4'), { seconds: 4, size: '320x180' });
  const clip = await generateMedia('clip', path.join(scratch, 'upload.mp4'), { seconds: 2, size: '320x180' });
  const blueprint = tinyBlueprint('mp4-loop-test');
  blueprint.createArchives = true;
  const id = (await api('POST', '/workflows', { name: 'Disk full', blueprint })).body.id as string;
  if ((await api('POST', '/channels', { workflows: [id] })).status !== 200) throw new Error('the channel did not start');
  const running = await untilChannel(() => channel(id), 'RUNNING', 'START_FAILED', 90_000);
  const multivariantUrl = running.outputs[0]!.url;
  const multivariant = HLS.parse((await request(multivariantUrl)).text);
  if (!multivariant.isMasterPlaylist) throw new Error('expected a multivariant playlist');
  const mediaUrl = new URL(multivariant.variants[0]!.uri, multivariantUrl).toString();
  const lastSequence = async (): Promise<number> => {
    requestsTotal++;
    const answer = await request(mediaUrl).catch(() => undefined);
    if (answer?.status !== 200) {
      requestsFailed++;
      return -1;
    }
    const media = HLS.parse(answer.text);
    return media.isMasterPlaylist ? -1 : (media.mediaSequenceBase ?? 0) + media.segments.length - 1;
  };

  const meta = await api('POST', '/broker/vod/meta', { title: 'Upload on a full disk', type: 'source' });
  if (meta.status !== 201) throw new Error(`meta: ${JSON.stringify(meta.body)}`);
  const guid = meta.body.data.guid as string;
  // an upload in progress (its partial file on the volume), then the disk fills under it
  const inProgress = upload(`${engine.url}/broker/vod/upload/${guid}?fileName=big.mp4`, auth, { dribble: 2 * VOLUME_MB * 1024 * 1024 });
  await until('the upload in progress', 30_000, async () => (fs.readdirSync(path.join(dataDir, 'uploads')).some((n) => n.endsWith('.part')) ? true : undefined));
  const filled = fillVolume(filler);
  const fullAt = Date.now();
  log(`filled the volume: ${(filled / 1024 / 1024).toFixed(1)} MiB written until ENOSPC`);
  const uploadInProgress = await inProgress;
  requestsTotal++;
  fillVolume(filler); // what the removed partial file gave back
  const uploadWhileFull = await upload(`${engine.url}/broker/vod/upload/${guid}?fileName=clip.mp4`, auth, fs.readFileSync(clip));
  requestsTotal++;
  // a resumable (tus) upload created on the full disk
  const tus = await request(`${engine.url}/broker/upload`, {
    method: 'POST',
    headers: { ...auth, 'tus-resumable': '1.0.0', 'upload-length': String(fs.statSync(clip).size), 'upload-metadata': `x-engine-meta-metaguid ${Buffer.from(guid).toString('base64')},filename ${Buffer.from('clip.mp4').toString('base64')}` },
  });
  requestsTotal++;
  const tusWhileFull = { status: tus.status, body: tus.text ? JSON.parse(tus.text) as Record<string, unknown> : undefined };
  // refused by design (507), but refused: counted
  requestsFailed += [uploadInProgress.status, uploadWhileFull.status, tusWhileFull.status].filter((status) => status !== 200).length;
  const vodAfterFailure = await vodInfo(guid);
  log(`uploads on the full disk: ${uploadInProgress.status}, ${uploadWhileFull.status}, tus ${tusWhileFull.status}; VOD ${vodAfterFailure.status}: ${vodAfterFailure.statusReason}`);

  const diskFullAlarm = await until('the channel\'s DISK_FULL alarm', 60_000, async () => {
    fillVolume(filler); // segments the live window removed give space back: the disk stays full
    return (await alarms(id)).find((a) => a.code === 'DISK_FULL' && a.active);
  });
  log(`alarm after ${((Date.now() - fullAt) / 1000).toFixed(1)} s: ${diskFullAlarm.message}`);

  // space back: the channel goes on by itself
  fs.rmSync(filler);
  const freedAt = Date.now();
  const before = await lastSequence();
  const alarmClearedAfterFree = await until('the DISK_FULL alarm cleared', 60_000, async () => ((await alarms(id)).some((a) => a.code === 'DISK_FULL' && !a.active) ? true : undefined));
  const playlistGrewAfterFree = await until('the playlist to grow', 60_000, async () => ((await lastSequence()) > before ? true : undefined));
  const recoverSeconds = (Date.now() - freedAt) / 1000;
  log(`the channel wrote segments again ${recoverSeconds.toFixed(1)} s after the space was freed`);

  // the stop merges the archive: on a full disk it fails, clearly, and leaves nothing that looks complete
  fillVolume(filler);
  const stopping = await api('DELETE', '/channels', { workflows: [id] });
  requestsTotal++;
  if (stopping.status !== 200) requestsFailed++;
  const stopOnFullDisk = await until('the stop to settle', 120_000, async () => {
    fillVolume(filler);
    const detail = await channel(id);
    return detail.channelStatus === 'STOP_FAILED' || detail.channelStatus === 'DONE' ? detail : undefined;
  });
  log(`stop on the full disk: ${stopOnFullDisk.channelStatus}: ${stopOnFullDisk.statusReason}`);
  const archives = path.join(dataDir, 'media', 'archives');
  const listFiles = (dir: string): string[] => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((n) => path.join(dir, n)) : []);
  const halfWritten = [
    ...listFiles(archives).filter((f) => stopOnFullDisk.channelStatus === 'STOP_FAILED' || /\.partial$/.test(f)),
    ...listFiles(path.join(dataDir, 'uploads')).filter((f) => f.endsWith('.part')),
  ];
  fs.rmSync(filler);

  // everything works again: the VOD uploads and encodes, the channel stops
  const again = await upload(`${engine.url}/broker/vod/upload/${guid}?fileName=clip.mp4`, auth, fs.readFileSync(clip));
  requestsTotal++;
  const vodAfterFree = await until('the VOD encoded', 180_000, async () => {
    const info = await vodInfo(guid);
    return info.status === 'complete' || info.status === 'error' ? info : undefined;
  });
  const stopAfterFree = stopOnFullDisk.channelStatus === 'DONE' ? stopOnFullDisk : await (async () => {
    await api('DELETE', '/channels', { workflows: [id] });
    return until('the channel DONE', 60_000, async () => {
      const detail = await channel(id);
      return detail.channelStatus === 'DONE' || detail.channelStatus === 'STOP_FAILED' ? detail : undefined;
    });
  })();

  // no record says complete over a missing or empty file
  const completeButTruncated: string[] = [];
  const rows = await postgres.query<{ id: string; status: string; source_file: string | null; output_dir: string | null }>('select id, status, source_file, output_dir from vod_sources');
  for (const row of rows.filter((r) => r.status === 'complete')) {
    const files = [...(row.source_file ? [path.join(dataDir, 'uploads', row.source_file)] : []), ...(row.output_dir ? listFiles(path.join(dataDir, 'media', row.output_dir)).filter((f) => fs.statSync(f).isFile()) : [])];
    if (files.length === 0) completeButTruncated.push(`${row.id}: no files`);
    for (const f of files) if (!fs.existsSync(f) || fs.statSync(f).size === 0) completeButTruncated.push(`${row.id}: ${f}`);
  }
  const engineAlive = engine.child.exitCode === null && engine.child.signalCode === null;
  if (again.status !== 200) requestsFailed++;
  return {
    fault: 'the disk of DATA_DIR full',
    recoverSeconds,
    requestsFailed,
    requestsTotal,
    recordsLost: completeButTruncated.length + halfWritten.length,
    details: { volumeMb: VOLUME_MB, viewers: options.viewers, uploadStatus: uploadInProgress.status, stopOnFullDisk: stopOnFullDisk.channelStatus },
    evidence: {
      uploadInProgress, uploadWhileFull, tusWhileFull, vodAfterFailure, diskFullAlarm, alarmClearedAfterFree, playlistGrewAfterFree,
      stopOnFullDisk: { channelStatus: stopOnFullDisk.channelStatus, statusReason: stopOnFullDisk.statusReason }, halfWritten, completeButTruncated,
      uploadAfterFree: again.status, vodAfterFree, stopAfterFree: { channelStatus: stopAfterFree.channelStatus }, engineAlive,
    },
  };
}
