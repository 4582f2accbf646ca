// Each thread of the proxy's process and what it had of the machine (issue 28), as Prometheus counters read from /proc
// at each scrape: its CPU time, and the time it was ready to run but waited for a core. The playlists' thread ("main")
// saturates first; its run-queue wait says when it is starved by the process's other threads or other processes
// rather than busy with its own work. The threads not named (V8's helpers and libuv's pool) count as "other".
import { Counter, type Registry } from 'prom-client';
import { processThreadIds, threadSchedSeconds, type NamedThread } from '../decide/thread-times.js';

/**
 * Registers ssai_thread_cpu_seconds_total and ssai_thread_run_queue_wait_seconds_total, by thread: "main" (the
 * process's own thread), the ones `named` gives (the decision threads, the beacon thread) and "other". Nothing is
 * reported where the kernel keeps no schedstat (not Linux).
 */
export function registerThreadMetrics(registry: Registry, named: () => NamedThread[]): void {
  // (a thread that ends and is started again, a decision thread after a crash, starts its label's counter over, as a
  // process restart does: rate() reads that as a reset)
  const read = (): Map<string, { cpu: number; wait: number }> => {
    const names = new Map<number, string>([[process.pid, 'main'], ...named().map((n): [number, string] => [n.tid, n.thread])]);
    const out = new Map<string, { cpu: number; wait: number }>();
    for (const tid of processThreadIds()) {
      const t = threadSchedSeconds(tid);
      if (!t) continue;
      const name = names.get(tid) ?? 'other';
      const sum = out.get(name) ?? { cpu: 0, wait: 0 };
      sum.cpu += t.cpu;
      sum.wait += t.wait;
      out.set(name, sum);
    }
    return out;
  };
  new Counter({
    name: 'ssai_thread_cpu_seconds_total', help: 'CPU time of each thread of the proxy\'s process: main (playlists), decisions-N, beacons, other', labelNames: ['thread'] as const, registers: [registry],
    collect() {
      this.reset();
      for (const [thread, t] of read()) this.inc({ thread }, t.cpu);
    },
  });
  new Counter({
    name: 'ssai_thread_run_queue_wait_seconds_total', help: 'Time each thread of the proxy\'s process was ready to run but waited for a core', labelNames: ['thread'] as const, registers: [registry],
    collect() {
      this.reset();
      for (const [thread, t] of read()) this.inc({ thread }, t.wait);
    },
  });
}
