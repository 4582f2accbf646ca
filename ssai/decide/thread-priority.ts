// The OS side of the proxy's worker threads (decision threads, the beacon thread): their task id and a lower priority,
// so the work they carry takes the cores the playlists leave (issue 19 point 4, issue 28).
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** Linux: this thread's task id, read from /proc/thread-self; undefined elsewhere. */
export function thisThreadsTid(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes this thread (task `tid`) nicer than the process by `niceness` (capped at 19). Elsewhere than Linux, or when
 * refused, the thread keeps the process's priority.
 */
export function lowerThisThreadsPriority(tid: number | undefined, niceness: number): void {
  if (!niceness || tid === undefined) return;
  try {
    setPriority(tid, Math.min(19, getPriority(tid) + niceness));
  } catch {
    // not allowed: same priority as the playlists
  }
}
