// What a delivery channel (webhook, email) takes and answers; the dispatcher stays blind to the channel.
import type { MessageKind } from './outbox.js';

export interface OutgoingMessage {
  id: string;
  kind: MessageKind;
  subject: string;
  /** the exact JSON text that is signed */
  body: string;
  /** `sha256=<hex>` over body with the organization's secret */
  signature: string;
  endpoint: string;
}

/** ok false means retry later (the receiver or the mail server failed), never "give up". */
export interface TransportResult {
  ok: boolean;
  detail: string;
}

export interface Transport {
  send(message: OutgoingMessage): Promise<TransportResult>;
  close?(): void;
}
