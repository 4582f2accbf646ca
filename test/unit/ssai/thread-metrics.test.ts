// The proxy's per-thread CPU and run-queue wait (issue 28): read from /proc for the process's real threads, a named
// worker thread reported under its own label, the unnamed ones as "other"; the beacon thread tells its task id.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { processThreadIds, threadCpuMs, threadSchedSeconds, type NamedThread } from '../../../ssai/decide/thread-times.js';
import { ThreadedBeaconDelivery } from '../../../ssai/serve/beacon-thread.js';
import { registerThreadMetrics } from '../../../ssai/serve/thread-metrics.js';

const LINUX_PROC = existsSync('/proc/self/task');

/** A worker that tells its task id, then spins until told to stop (real CPU on its own thread). */
const SPINNER = `
const { parentPort } = require('node:worker_threads');
const { readlinkSync } = require('node:fs');
parentPort.postMessage(Number(readlinkSync('/proc/thread-self').split('/').pop()));
let stop = false;
parentPort.on('message', () => { stop = true; });
const spin = () => { const until = Date.now() + 20; while (Date.now() < until); if (!stop) setImmediate(spin); else parentPort.close(); };
spin();`;

async function values(registry: Registry, name: string): Promise<Map<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return new Map((metric?.values ?? []).map((v) => [String(v.labels.thread), v.value]));
}

describe.skipIf(!LINUX_PROC)('thread metrics (Linux /proc)', () => {
  it('reads a thread\'s CPU time and run-queue wait from its task', () => {
    const tids = processThreadIds();
    expect(tids).toContain(process.pid);
    const sched = threadSchedSeconds(process.pid);
    expect(sched?.cpu).toBeGreaterThan(0);
    expect(sched?.wait).toBeGreaterThanOrEqual(0);
    expect(threadCpuMs(process.pid)).toBeGreaterThan(0);
    // a task that is not there reads as unknown, not as zero
    expect(threadSchedSeconds(2 ** 30)).toBeUndefined();
    expect(threadCpuMs(2 ** 30)).toBeUndefined();
  });

  it('reports the main thread, a named thread under its name and the rest as other; together no more than the process', async () => {
    const worker = new Worker(SPINNER, { eval: true });
    const tid = await new Promise<number>((resolve) => worker.once('message', resolve));
    let named: NamedThread[] = [{ thread: 'spinner', tid }];
    const registry = new Registry();
    registerThreadMetrics(registry, () => named);
    try {
      // the spinner has run for as long as it takes its CPU time to show (events, not a wall-clock budget)
      while ((threadSchedSeconds(tid)?.cpu ?? 0) < 0.05) await new Promise((r) => setTimeout(r, 20));
      const cpu = await values(registry, 'ssai_thread_cpu_seconds_total');
      const wait = await values(registry, 'ssai_thread_run_queue_wait_seconds_total');
      expect(cpu.get('spinner')).toBeGreaterThanOrEqual(0.05);
      expect(cpu.get('main')).toBeGreaterThan(0);
      expect([...wait.keys()].sort()).toEqual([...cpu.keys()].sort());
      for (const v of wait.values()) expect(v).toBeGreaterThanOrEqual(0);
      // every thread counted once: the sum is within the process's own CPU time (threads ended before are in that only)
      const usage = process.cpuUsage();
      const sum = [...cpu.values()].reduce((a, b) => a + b, 0);
      expect(sum).toBeLessThanOrEqual((usage.user + usage.system) / 1e6 + 0.05);
      // a thread no longer named is counted with the others
      named = [];
      const after = await values(registry, 'ssai_thread_cpu_seconds_total');
      expect(after.has('spinner')).toBe(false);
      expect(after.get('other')).toBeGreaterThanOrEqual(cpu.get('spinner')!);
    } finally {
      worker.postMessage('stop');
      await worker.terminate();
    }
  });

  it('the beacon thread tells its task id once started', async () => {
    const tracker = createServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', () => r()));
    const delivery = new ThreadedBeaconDelivery();
    try {
      expect(delivery.threadIds()).toEqual([]); // no beacon yet: no thread
      delivery.send([`http://127.0.0.1:${(tracker.address() as AddressInfo).port}/imp`]);
      await delivery.idle(); // (the thread posts its task id before any report)
      const [beacons] = delivery.threadIds();
      expect(beacons?.thread).toBe('beacons');
      expect(processThreadIds()).toContain(beacons?.tid);
    } finally {
      await delivery.close();
      tracker.closeAllConnections();
      tracker.close();
    }
  });
});
