// The body of the beacon thread (ssai/serve/beacon-thread.ts): the URLs it is sent go out through a BeaconDelivery on
// this thread's own event loop, at a lower priority than the playlists; how they ended goes back as counts.
import { parentPort, workerData } from 'node:worker_threads';
import { BeaconDelivery, type BeaconDeliveryOptions, type BeaconItem, type BeaconResult } from './beacon-delivery.js';
import { lowerThisThreadsPriority, thisThreadsTid } from '../decide/thread-priority.js';
import { HEAP_ASK, reportHeap } from '../decide/thread-heap.js';
import type { BeaconThreadReport } from './beacon-thread.js';

const port = parentPort;
if (!port) throw new Error('beacon-thread-body runs in a worker thread');
const { nice, ...options } = workerData as BeaconDeliveryOptions & { nice?: number };
const tid = thisThreadsTid();
// the main thread reports this task's CPU time and run-queue wait as metrics (thread-metrics.ts)
if (tid !== undefined) port.postMessage({ tid });
// A beacon may go out a second late without harm; a playlist may not.
lowerThisThreadsPriority(tid, nice ?? 0);

/**
 * What happened over REPORT_MS, reported in one message. Once a turn was a message for about every beacon (this
 * loop turns for each answer): the main thread, which answers playlists, spent 3.5-5 µs a beacon taking them in and
 * was woken for each; every 50 ms it spends 0.8 (`npx tsx bench/beacons.ts 40000`, "thread"). The counts only feed
 * the metrics and idle(), which learn of a beacon's end that much later.
 */
const REPORT_MS = 50;
let report: BeaconThreadReport | undefined;
function reported(): BeaconThreadReport {
  if (!report) {
    report = { sent: 0, failed: 0, more: 0 };
    setTimeout(() => {
      const done = report!;
      report = undefined;
      port!.postMessage(done);
    }, REPORT_MS);
  }
  return report;
}
const delivery = new BeaconDelivery(options, (result: BeaconResult) => { reported()[result]++; });
// A packed event becomes its URLs here: the main thread counted it as one item.
port.on('message', (items: BeaconItem[] | typeof HEAP_ASK) => {
  if (items === HEAP_ASK) return reportHeap(port);
  reported().more += delivery.send(items) - items.length;
});
