// The organization's notification secret and the HMAC-SHA256 signature every message carries (issue 16).
// The secret is stored sealed by the key vault, like API keys: a copy of the database alone cannot forge messages.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../kernel/store/database.js';
import type { KeyVault } from '../api-keys/key-vault.js';

export interface NotificationSecretTable {
  organization_id: string;
  secret_encrypted: string;
  created_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    notification_secrets: NotificationSecretTable;
  }
}

export const SIGNATURE_HEADER = 'X-Engine-Signature';
export const MESSAGE_ID_HEADER = 'X-Engine-Message-Id';
export const MESSAGE_TYPE_HEADER = 'X-Engine-Message-Type';

/** `sha256=<hex>` of the HMAC-SHA256 over the exact body bytes. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** What a receiver does: recompute and compare in constant time. */
export function verifySignature(secret: string, body: string, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The organization's secret, created at first use; concurrent first uses agree on one. */
export async function organizationSecret(db: Db, vault: KeyVault, organizationId: string, now: number): Promise<string> {
  const existing = await db.selectFrom('notification_secrets').select('secret_encrypted').where('organization_id', '=', organizationId).executeTakeFirst();
  if (existing) return vault.decrypt(existing.secret_encrypted);
  await db
    .insertInto('notification_secrets')
    .values({ organization_id: organizationId, secret_encrypted: vault.encrypt(newSecret()), created_at: now })
    .onConflict((oc) => oc.column('organization_id').doNothing())
    .execute();
  const row = await db.selectFrom('notification_secrets').select('secret_encrypted').where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
  return vault.decrypt(row.secret_encrypted);
}

/** Replaces the secret; messages sent from now on (retries included) carry signatures of the new one. */
export async function rotateOrganizationSecret(db: Db, vault: KeyVault, organizationId: string, now: number): Promise<string> {
  const secret = newSecret();
  const sealed = vault.encrypt(secret);
  await db
    .insertInto('notification_secrets')
    .values({ organization_id: organizationId, secret_encrypted: sealed, created_at: now })
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ secret_encrypted: sealed, created_at: now }))
    .execute();
  return secret;
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
