// The body of the beacon thread (beacon-thread.ts): sends the URLs it is given and posts back how many were sent and
// how many failed, once per turn of its event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { BeaconDispatch, type BeaconDispatchOptions } from './beacon-dispatch.js';

const port = parentPort!;
let sent = 0;
let failed = 0;
let posting = false;
const post = (): void => {
  posting = false;
  port.postMessage({ sent, failed });
  sent = 0;
  failed = 0;
};
const dispatch = new BeaconDispatch({
  ...(workerData as Omit<BeaconDispatchOptions, 'onResult'>),
  onResult: (result) => {
    if (result === 'sent') sent++; else failed++;
    if (!posting) { posting = true; setImmediate(post); }
  },
});
port.on('message', (urls: string[]) => { for (const url of urls) dispatch.send(url); });
