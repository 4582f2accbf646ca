// Which packager runs a channel, as its work dir (DATA_DIR/live-work/<workflowId>/owner.json) says. Packagers of one
// cluster share DATA_DIR (DESIGN.md "Processes and scale"), so a packager starting up must recover only the channels
// whose owner is gone (killed, crashed), never those another packager on the same volume runs now.
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ChannelOwner {
  /** host name: a pid only means something on its own host */
  host: string;
  pid: number;
  /** the process's start time (/proc/<pid>/stat field 22): a recycled pid is a different process */
  pidStart: string | undefined;
  /** the LiveRuntime: several engines may share one process (tests, embedding) */
  runtimeId: string;
}

export const OWNER_FILE = 'owner.json';

/** Runtimes open in this process: an owner of this very process is alive only while its runtime is. */
const openRuntimes = new Set<string>();

export function registerRuntime(runtimeId: string): () => void {
  openRuntimes.add(runtimeId);
  return () => openRuntimes.delete(runtimeId);
}

function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: count fields from the last ')'
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

export function ownerOf(runtimeId: string): ChannelOwner {
  return { host: os.hostname(), pid: process.pid, pidStart: startTimeOf(process.pid), runtimeId };
}

export function readOwner(dir: string): ChannelOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path.join(dir, OWNER_FILE), 'utf8')) as Partial<ChannelOwner>;
    if (typeof owner.host !== 'string' || typeof owner.pid !== 'number' || typeof owner.runtimeId !== 'string') return undefined;
    return { host: owner.host, pid: owner.pid, pidStart: typeof owner.pidStart === 'string' ? owner.pidStart : undefined, runtimeId: owner.runtimeId };
  } catch {
    return undefined;
  }
}

export function writeOwner(dir: string, owner: ChannelOwner): void {
  writeFileSync(path.join(dir, OWNER_FILE), JSON.stringify(owner));
}

/**
 * Whether the owner may still run the channel. Another host's process cannot be checked from here: it counts as alive
 * (its own host recovers it when its packager restarts), so a packager never ends encoders it cannot see.
 */
export function ownerAlive(owner: ChannelOwner): boolean {
  if (owner.host !== os.hostname()) return true;
  if (owner.pid === process.pid) return openRuntimes.has(owner.runtimeId);
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists under another user
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = startTimeOf(owner.pid);
  return owner.pidStart === undefined || start === undefined || start === owner.pidStart;
}

/**
 * Takes a channel's work dir over from a dead owner (or from none: a dir an older engine left without owner file);
 * `alive` may know more than this host can see (another host's packager heartbeat in the database).
 * The claim is atomic across processes (a rename, or an exclusive create), so two packagers starting together never
 * both recover the same channel. False when the owner is alive or another packager claimed it first.
 */
export function claimWorkDir(dir: string, me: ChannelOwner, alive: (owner: ChannelOwner) => boolean = ownerAlive): boolean {
  const owner = readOwner(dir);
  const file = path.join(dir, OWNER_FILE);
  if (owner) {
    if (alive(owner)) return false;
    const taken = `${file}.claimed-${me.runtimeId}`;
    try {
      renameSync(file, taken);
    } catch {
      return false; // another packager renamed it first
    }
    rmSync(taken, { force: true });
    writeOwner(dir, me);
    return true;
  }
  try {
    writeFileSync(file, JSON.stringify(me), { flag: 'wx' });
    return true;
  } catch {
    return false;
  }
}
