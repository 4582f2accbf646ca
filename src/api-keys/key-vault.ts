// API keys are stored encrypted (AES-256-GCM) with an HMAC lookup hash; the master key lives outside the
// database (ENGINE_SECRET_KEY or DATA_DIR/keys/master.key), so a copy of the database alone reveals nothing.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export class KeyVault {
  private constructor(private readonly masterKey: Buffer) {}

  static open(secretKey: string | undefined, dataDir: string): KeyVault {
    if (secretKey) return new KeyVault(Buffer.from(secretKey, 'base64'));
    const file = path.join(dataDir, 'keys', 'master.key');
    if (!fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      try {
        fs.writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} must hold base64 of 32 bytes`);
    return new KeyVault(key);
  }

  newKeyValue(): string {
    return `mpe_${randomBytes(24).toString('base64url')}`;
  }

  lookupHash(value: string): string {
    return createHmac('sha256', this.masterKey).update(value).digest('base64url');
  }

  encrypt(value: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.masterKey, iv);
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
  }

  decrypt(sealed: string): string {
    const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
    if (!iv || !tag || !body) throw new Error('sealed value is malformed');
    const decipher = createDecipheriv('aes-256-gcm', this.masterKey, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  }
}
