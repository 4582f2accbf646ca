// The JWT signing key is generated at first start and kept in the store, so every api instance on one
// database verifies the others' tokens.
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import type { Db } from '../../kernel/store/database.js';
import { newId } from '../../kernel/core/ids.js';

export interface SigningKeyTable {
  kid: string;
  algorithm: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    signing_keys: SigningKeyTable;
  }
}

export const JWT_ALGORITHM = 'ES256';

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

export async function loadOrCreateSigningKey(db: Db, now: number): Promise<SigningKey> {
  let row = await db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').executeTakeFirst();
  if (!row) {
    const pair = await generateKeyPair(JWT_ALGORITHM, { extractable: true });
    const candidate: SigningKeyTable = {
      kid: newId(),
      algorithm: JWT_ALGORITHM,
      private_jwk: JSON.stringify(await exportJWK(pair.privateKey)),
      public_jwk: JSON.stringify(await exportJWK(pair.publicKey)),
      created_at: now,
    };
    await db.insertInto('signing_keys').values(candidate).execute();
    // Two instances starting at once: both insert, the newest row wins for everyone.
    row = await db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').executeTakeFirstOrThrow();
  }
  const privateKey = (await importJWK(JSON.parse(row.private_jwk) as JWK, JWT_ALGORITHM)) as CryptoKey;
  const publicKey = (await importJWK(JSON.parse(row.public_jwk) as JWK, JWT_ALGORITHM)) as CryptoKey;
  return { kid: row.kid, privateKey, publicKey };
}
