// Email delivery through nodemailer and SMTP_URL. The text part is a line for humans (the SubscribeURL of a
// confirmation) and then the same signed JSON a webhook receives; the signature is in a header as for webhooks.
import nodemailer, { type Transporter } from 'nodemailer';
import { MESSAGE_ID_HEADER, MESSAGE_TYPE_HEADER, SIGNATURE_HEADER } from './signing.js';
import type { OutgoingMessage, Transport, TransportResult } from './transport.js';

export class EmailTransport implements Transport {
  private readonly transporter: Transporter;

  constructor(smtpUrl: string, private readonly from: string) {
    this.transporter = nodemailer.createTransport(smtpUrl);
  }

  async send(message: OutgoingMessage): Promise<TransportResult> {
    const parsed = JSON.parse(message.body) as { SubscribeURL?: unknown; Message?: unknown };
    const intro = message.kind === 'SubscriptionConfirmation' && typeof parsed.SubscribeURL === 'string'
      ? `${String(parsed.Message ?? '')}\n\nConfirm: ${parsed.SubscribeURL}\n`
      : `${message.subject}\n`;
    try {
      const info = await this.transporter.sendMail({
        from: this.from,
        to: message.endpoint,
        subject: message.subject,
        text: `${intro}\n${message.body}\n`,
        // short lines keep the JSON readable by receivers that do not decode quoted-printable
        textEncoding: 'base64',
        headers: { [MESSAGE_ID_HEADER]: message.id, [MESSAGE_TYPE_HEADER]: message.kind, [SIGNATURE_HEADER]: message.signature },
      });
      return { ok: true, detail: `SMTP ${String(info.response ?? 'accepted').slice(0, 200)}` };
    } catch (error) {
      return { ok: false, detail: error instanceof Error ? error.message : String(error) };
    }
  }

  close(): void {
    this.transporter.close();
  }
}
