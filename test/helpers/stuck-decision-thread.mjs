// A decision thread whose event loop sticks on its first request, spinning (test/unit/ssai/decision-threads.test.ts).
// It tells its OS task id first, as the real thread does, so the client can see it burn CPU.
import { readlinkSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

try { parentPort.postMessage({ tid: Number(readlinkSync('/proc/thread-self').split('/').pop()) }); } catch { /* not Linux */ }
parentPort.on('message', () => {
  for (;;);
});
