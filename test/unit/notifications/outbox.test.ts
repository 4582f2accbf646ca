import { describe, expect, it } from 'vitest';
import { backoffMs, messageId } from '../../../src/notifications/outbox.js';
import { signBody, verifySignature } from '../../../src/notifications/signing.js';

describe('backoffMs', () => {
  it('starts at 5 s, doubles, and stays at 1 h, within ±20 %', () => {
    expect(backoffMs(1, () => 0.5)).toBe(5_000);
    expect(backoffMs(2, () => 0.5)).toBe(10_000);
    expect(backoffMs(5, () => 0.5)).toBe(80_000);
    expect(backoffMs(40, () => 0.5)).toBe(3600_000);
    expect(backoffMs(1, () => 0)).toBe(4_000);
    expect(backoffMs(1, () => 1)).toBe(6_000);
  });
});

describe('messageId', () => {
  it('is a UUIDv7 that sorts in the order the ids were made, within one millisecond too', () => {
    const ids = Array.from({ length: 5000 }, () => messageId(1_760_000_000_000));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // the next millisecond after an overflowing one still sorts after it
    const next = messageId(1_760_000_000_001);
    expect(next > ids.at(-1)!).toBe(true);
    expect(messageId(1_760_000_000_011) > next).toBe(true);
  });
});

describe('signatures', () => {
  it('are sha256=<hex> of HMAC-SHA256 over the exact body', () => {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?"
    expect(signBody('Jefe', 'what do ya want for nothing?')).toBe('sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
    expect(verifySignature('Jefe', 'what do ya want for nothing?', 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843')).toBe(true);
    expect(verifySignature('Jefe', 'what do ya want for nothing!', 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843')).toBe(false);
    expect(verifySignature('Jefe', 'x', undefined)).toBe(false);
  });
});
