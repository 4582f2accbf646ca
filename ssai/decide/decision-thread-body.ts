// The body of a decision thread (ssai/decision-threads.ts): ad server requests and VAST parsing on their own event
// loop, answered by message. Each request runs at once; the scheduler of the main thread bounds how many are open.
import { parentPort, workerData } from 'node:worker_threads';
import { VastDecisionClient, type AdDecisionResult, type VastDecisionOptions } from './vast-decision.js';
import { packTracking } from './packed-tracking.js';
import { batchedSender } from './message-batch.js';
import { lowerThisThreadsPriority, thisThreadsTid } from './thread-priority.js';
import { HEAP_ASK, reportHeap } from './thread-heap.js';
import type { DecisionThreadAnswer, DecisionThreadAsk } from './decision-threads.js';

const port = parentPort;
if (!port) throw new Error('decision-thread-body runs in a worker thread');
const { nice, ...decisionOptions } = workerData as VastDecisionOptions & { nice?: number };
const client = new VastDecisionClient(decisionOptions);
const tid = thisThreadsTid();
// the main thread reads this task's CPU time to tell a stuck thread from a starved one (decision-threads.ts)
if (tid !== undefined) port.postMessage({ tid });
// Background work runs behind the playlists (issue 19 point 4): at 10,000 viewers a break's decisions keep this thread
// busy for seconds, and on a machine with few cores the playlists' thread then waited for a core (its event loop busy
// ~0.65 of the time for ~0.48 of CPU, reloads queued up to 240 ms). A nicer thread takes the cores the playlists leave;
// an early decision has seconds of slack. Linux: a thread is a task, its id read from /proc/thread-self; elsewhere,
// or when refused, the thread keeps the process's priority.
lowerThisThreadsPriority(tid, nice ?? 0); // nicer than the process by `nice`
/** At most 32 answers to a message: the main thread resolves a message's answers in one go, its playlists waiting. */
const answer = batchedSender<DecisionThreadAnswer>((batch) => port.postMessage(batch), 32);
port.on('message', (asks: DecisionThreadAsk[] | typeof HEAP_ASK) => {
  if (asks === HEAP_ASK) return reportHeap(port);
  for (const ask of asks) {
    const deciding = ask.text === undefined ? client.decideUrl(ask.url) : client.fromText(ask.text, ask.url);
    void deciding.then(
      (result) => answer({ id: ask.id, result: withPackedTracking(result) }),
      (e: unknown) => answer({ id: ask.id, result: { ok: false, error: { reason: 'malformed', message: e instanceof Error ? e.message : String(e) } } }),
    );
  }
});

/** The ads' beacons packed here (deflate), off the main thread: the record keeps the pack when every ad is taken. */
function withPackedTracking(result: AdDecisionResult): AdDecisionResult {
  if (result.ok && result.ads.length) result.packedTracking = packTracking(result.ads.map((ad) => ad.trackingEvents));
  return result;
}
