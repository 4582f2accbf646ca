// The body of a decision thread (ssai/decision-threads.ts): ad server requests and VAST parsing on their own event
// loop, answered by message. Each request runs at once; the scheduler of the main thread bounds how many are open.
import { parentPort, workerData } from 'node:worker_threads';
import { VastDecisionClient, type AdDecisionResult, type VastDecisionOptions } from './vast-decision.js';
import { packTracking } from './packed-tracking.js';
import { batchedSender } from './message-batch.js';
import type { DecisionThreadAnswer, DecisionThreadAsk } from './decision-threads.js';

const port = parentPort;
if (!port) throw new Error('decision-thread-body runs in a worker thread');
const client = new VastDecisionClient(workerData as VastDecisionOptions);
/** At most 32 answers to a message: the main thread resolves a message's answers in one go, its playlists waiting. */
const answer = batchedSender<DecisionThreadAnswer>((batch) => port.postMessage(batch), 32);
port.on('message', (asks: DecisionThreadAsk[]) => {
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
