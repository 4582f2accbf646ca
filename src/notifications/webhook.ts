// Webhook delivery: one POST of the signed JSON body; any 2xx is delivered, anything else is retried.
import { MESSAGE_ID_HEADER, MESSAGE_TYPE_HEADER, SIGNATURE_HEADER } from './signing.js';
import type { OutgoingMessage, Transport, TransportResult } from './transport.js';

export class WebhookTransport implements Transport {
  constructor(private readonly timeoutMs = 10_000) {}

  async send(message: OutgoingMessage): Promise<TransportResult> {
    try {
      const response = await fetch(message.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'media-pipeline-engine-notifications/1',
          [MESSAGE_ID_HEADER]: message.id,
          [MESSAGE_TYPE_HEADER]: message.kind,
          [SIGNATURE_HEADER]: message.signature,
        },
        body: message.body,
        // a redirect could point the signed body elsewhere: the subscriber registers the final URL instead
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // the answer's body means nothing here; do not download whatever a receiver sends back
      await response.body?.cancel().catch(() => undefined);
      return { ok: response.status >= 200 && response.status < 300, detail: `HTTP ${response.status}` };
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      return { ok: false, detail: `${error instanceof Error ? error.message : String(error)}${cause}` };
    }
  }
}
