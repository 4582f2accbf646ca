// What a thread of this process has had of the machine (Linux /proc): its CPU time, and the time it was ready to run
// but waited for a core. The second tells a saturated thread from a starved one (issue 28: on a 2-core machine the
// playlists' thread spent ~15% of the wall time runnable and unscheduled while its event loop was busy).
import { readdirSync, readFileSync } from 'node:fs';

/** A named thread of this process: its metrics label and its OS task id. */
export type NamedThread = { thread: string; tid: number };

/** USER_HZ: the unit of /proc/<pid>/task/<tid>/stat's times (100 on every Linux the engine runs on). */
const TICKS_PER_SECOND = 100;

/** A task's user + system CPU time in ms, from /proc/self/task/<tid>/stat (fields 14 and 15); undefined if unreadable. */
export function threadCpuMs(tid: number): number | undefined {
  try {
    // (the command name, field 2, is in parentheses and may hold spaces: the fields are counted after it)
    const text = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(') ') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A task's CPU time and its run-queue wait, in seconds, from /proc/self/task/<tid>/schedstat (nanoseconds: on a CPU,
 * waiting on a run queue, time slices); undefined where the kernel keeps no schedstat or the task is gone.
 */
export function threadSchedSeconds(tid: number): { cpu: number; wait: number } | undefined {
  try {
    const [cpu, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
    return cpu !== undefined && wait !== undefined && Number.isFinite(cpu) && Number.isFinite(wait) ? { cpu: cpu / 1e9, wait: wait / 1e9 } : undefined;
  } catch {
    return undefined;
  }
}

/** The task ids of this process's threads (its main thread's is the process id); [] where /proc cannot be read. */
export function processThreadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number).filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    return [];
  }
}
