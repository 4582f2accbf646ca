// The ffmpeg processes a killed engine left behind, found by the pid files FfmpegProcess writes (`pidFile`).
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * Ends the ffmpeg processes a previous engine left behind in the given channel work dirs (pid files `*.pid`). A pid
 * is only killed when its command line still names the pid file's directory, so a recycled pid is never hit.
 */
export function killOrphans(dirs: readonly string[]): number {
  let killed = 0;
  for (const dir of dirs) {
    let files: string[] = [];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.pid'));
    } catch {
      continue;
    }
    for (const file of files) {
      const pidFile = path.join(dir, file);
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        if (Number.isInteger(pid) && pid > 1 && cmdline.includes(dir)) {
          killGroup(pid);
          killed += 1;
        }
      } catch {
        /* not running any more */
      }
      rmSync(pidFile, { force: true });
    }
  }
  return killed;
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
