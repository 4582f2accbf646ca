// Real ffmpeg on both sides of a push front: a sender pushing a tiny testsrc + tone, and an encoder-side
// receiver that reads the front's encoderInputArgs() and decodes frames.
import type { IngestEvent, IngestFront } from '../../../packager/ingest/ingest-front.js';
import { spawnFfmpeg, type StartedFfmpeg } from '../../../media/ffmpeg-process.js';

export const FFMPEG = process.env.FFMPEG_PATH ?? 'ffmpeg';

const started: StartedFfmpeg[] = [];

/** Pushes `seconds` of 160x90 testsrc + sine in real time to `url` as `format` (flv, mpegts, rtp_mpegts). */
export function startSender(url: string, format: string, options: { seconds?: number; outputOptions?: string[] } = {}): StartedFfmpeg {
  const child = spawnFfmpeg(FFMPEG, [
    '-loglevel', 'error', '-re',
    '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=25',
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-t', String(options.seconds ?? 30),
    '-pix_fmt', 'yuv420p', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25',
    '-c:a', 'aac', '-b:a', '48k',
    ...(options.outputOptions ?? []),
    '-f', format, url,
  ]);
  started.push(child);
  return child;
}

/** The encoder side: opens the front's input and decodes `frames` video frames, then exits 0. */
export function startReceiver(front: IngestFront, frames = 25): StartedFfmpeg {
  const child = spawnFfmpeg(FFMPEG, ['-loglevel', 'error', ...front.encoderInputArgs(), '-map', '0:v:0', '-frames:v', String(frames), '-f', 'null', '-']);
  started.push(child);
  return child;
}

/** Kills every ffmpeg the test started (afterEach) and says which were still alive. */
export async function killStarted(): Promise<void> {
  await Promise.all(started.splice(0).map((child) => child.stop(500)));
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves with the first event of `type`, rejects after `timeoutMs`. */
export function nextEvent<T extends IngestEvent['type']>(front: IngestFront, type: T, timeoutMs = 20_000): Promise<Extract<IngestEvent, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no ${type} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = front.subscribe((event) => {
      if (event.type !== type) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(event as Extract<IngestEvent, { type: T }>);
    });
  });
}

/** Every event the front emits, in order. */
export function recordEvents(front: IngestFront): IngestEvent[] {
  const events: IngestEvent[] = [];
  front.subscribe((event) => events.push(event));
  return events;
}
