// Channel owner files (packager/channel-owner.ts): only a dead owner's work dir can be claimed, and only once.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimWorkDir, ownerAlive, ownerOf, readOwner, registerRuntime, writeOwner } from '../../../packager/channel-owner.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'owner-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('channel owners', () => {
  it('counts a runtime of this process alive only while it is registered', () => {
    const unregister = registerRuntime('rt-a');
    expect(ownerAlive(ownerOf('rt-a'))).toBe(true);
    expect(ownerAlive(ownerOf('rt-never'))).toBe(false);
    unregister();
    expect(ownerAlive(ownerOf('rt-a'))).toBe(false);
  });

  it('tells a dead pid, and a live pid with another start time (recycled), from a live owner', () => {
    const other = { host: os.hostname(), pid: process.ppid, pidStart: undefined, runtimeId: 'parent' };
    expect(ownerAlive(other)).toBe(true);
    expect(ownerAlive({ ...other, pid: deadPid() })).toBe(false);
    if (fs.existsSync('/proc/self/stat')) expect(ownerAlive({ ...other, pidStart: '1' })).toBe(false);
    // another host's process cannot be checked from here: left alone
    expect(ownerAlive({ ...other, host: `not-${os.hostname()}`, pid: deadPid() })).toBe(true);
  });

  it('claims a dead owner\'s or an ownerless dir once, and never a live owner\'s', () => {
    const unregister = [registerRuntime('rt-live'), registerRuntime('rt-me')];
    const me = ownerOf('rt-me');
    const dead = tempDir();
    writeOwner(dead, { host: os.hostname(), pid: deadPid(), pidStart: undefined, runtimeId: 'gone' });
    expect(claimWorkDir(dead, me)).toBe(true);
    expect(readOwner(dead)?.runtimeId).toBe('rt-me');
    expect(claimWorkDir(dead, ownerOf('rt-late'))).toBe(false); // the claimer now owns it, and lives
    const none = tempDir();
    expect(claimWorkDir(none, me)).toBe(true);
    const live = tempDir();
    writeOwner(live, ownerOf('rt-live'));
    expect(claimWorkDir(live, me)).toBe(false);
    expect(readOwner(live)?.runtimeId).toBe('rt-live');
    for (const done of unregister) done();
  });
});
