// A decision thread that is busy but alive (test/unit/ssai/decision-threads.test.ts): each ask holds its event loop
// for 150 ms, then is answered with no ads, so a burst of asks is answered one by one, the last ones past the budget.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', (asks) => {
  for (const ask of asks) {
    const until = Date.now() + 150;
    while (Date.now() < until);
    parentPort.postMessage([{ id: ask.id, result: { ok: true, ads: [] } }]);
  }
});
