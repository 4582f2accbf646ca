// A decision thread whose event loop sticks on its first request (test/unit/ssai/decision-threads.test.ts).
import { parentPort } from 'node:worker_threads';

parentPort.on('message', () => {
  for (;;);
});
