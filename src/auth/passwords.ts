import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';

// scrypt from node:crypto: memory-hard, no native dependency to build.
const KEY_LENGTH = 32;

/** scrypt's cost: N (CPU and memory), r (block size) and p (parallelism). */
interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * N 2^15, r 8: 32 MiB a hash, 80 ms on one core of a 2-core machine. Twice the paper's interactive N 2^14; the size
 * is chosen too: glibc maps any allocation over 32 MiB and returns it when freed, while a smaller one that was once
 * mapped raises malloc's threshold above it, and from then each thread that hashes keeps the buffer in its arena
 * (N 2^14 took a process 45 → 112 MB over the four libuv threads; docs/faults.md, issue 32).
 */
const COST: ScryptCost = { N: 32768, r: 8, p: 1 };
/** the most a stored hash may ask for (N 2^20, r 8 is 1 GiB): a damaged row costs a refusal, not the memory */
const MAX_MEMORY = 256 * 1024 * 1024;

function scrypt(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const maxmem = 128 * cost.r * (cost.N + cost.p + 2) + 1024 * 1024;
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, KEY_LENGTH, { ...cost, maxmem }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$key`, or the `scrypt$N$salt$key` of before (r 8, p 1); undefined when it is neither. */
function parseStored(stored: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts[0] !== 'scrypt' || (parts.length !== 4 && parts.length !== 6)) return undefined;
  const [N, r, p] = (parts.length === 6 ? parts.slice(1, 4) : [parts[1], '8', '1']).map(Number) as [number, number, number];
  const [saltText, keyText] = parts.slice(-2) as [string, string];
  const powerOfTwo = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0;
  // (p and r bounded too: memory does not bound the time a huge p would take)
  if (!powerOfTwo || !Number.isInteger(r) || !Number.isInteger(p) || r < 1 || r > 32 || p < 1 || p > 16 || 128 * r * (N + p) > MAX_MEMORY) return undefined;
  if (!saltText || !keyText) return undefined;
  return { cost: { N, r, p }, salt: Buffer.from(saltText, 'base64url'), key: Buffer.from(keyText, 'base64url') };
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStored(stored);
  if (!parsed) return false;
  const actual = await scrypt(password, parsed.salt, parsed.cost);
  return actual.length === parsed.key.length && timingSafeEqual(actual, parsed.key);
}

/** A hash made with another cost than today's: rehashed at the next sign-in that proves the password. */
export function passwordNeedsRehash(stored: string): boolean {
  const parsed = parseStored(stored);
  return !parsed || parsed.cost.N !== COST.N || parsed.cost.r !== COST.r || parsed.cost.p !== COST.p;
}

export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
