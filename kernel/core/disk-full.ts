// A full disk (ENOSPC, or a quota: EDQUOT) is not the caller's fault nor a bug: it gets its own answer (507
// INSUFFICIENT_STORAGE) and its own statusReason, so an operator knows to free space rather than to retry or debug.

import { statfsSync } from 'node:fs';

const CODES = new Set(['ENOSPC', 'EDQUOT']);

/** Whether `error` (a Node error, or a tool's failure whose message quotes its stderr) says the disk is full. */
export function isDiskFull(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CODES.has(code)) return true;
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && /ENOSPC|No space left on device|Disk quota exceeded/i.test(message);
}

/** What a record says when `what` (an upload, an archive) could not be written because the disk is full. */
export function diskFullReason(what: string): string {
  return `${what} could not be written: the disk of the data directory is full (ENOSPC); free space, then try again`;
}

/** Below this much free space a volume counts as full: a live segment or a playlist no longer fits for sure. */
export const DISK_FULL_BYTES = 2 * 1024 * 1024;

/**
 * Whether the volume holding `dir` is (nearly) full. For tools that do not say so: ffmpeg's HLS muxer may stall on
 * ENOSPC with nothing on stderr instead of exiting.
 */
export function volumeFull(dir: string): boolean {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize < DISK_FULL_BYTES;
  } catch {
    return false;
  }
}
