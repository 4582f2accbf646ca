// A decision thread the OS does not run for a while (test/unit/ssai/decision-threads.test.ts): its first ask blocks
// it for 3 s without using a core (as a niced thread on a loaded machine waits), then every ask is answered with no ads.
import { readlinkSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';

parentPort.postMessage({ tid: Number(readlinkSync('/proc/thread-self').split('/').pop()) });
let first = true;
parentPort.on('message', (asks) => {
  if (first) { first = false; Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_000); }
  parentPort.postMessage(asks.map((ask) => ({ id: ask.id, result: { ok: true, ads: [] } })));
});
