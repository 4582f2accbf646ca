import type { Clock } from '../core/clock.js';

/**
 * Counts failed logins per email and per address in a fixed window; in memory on purpose: a restart
 * forgiving a few failures is acceptable, and the login path stays free of database writes.
 */
export class LoginRateLimiter {
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures = 5,
    private readonly windowMs = 15 * 60 * 1000,
  ) {}

  /** Seconds until the key may try again, or 0 when it may try now. */
  retryAfterSeconds(keys: string[]): number {
    const now = this.clock.nowMs();
    let wait = 0;
    for (const key of keys) {
      const entry = this.failures.get(key);
      if (!entry) continue;
      if (now - entry.windowStart >= this.windowMs) {
        this.failures.delete(key);
        continue;
      }
      if (entry.count >= this.maxFailures) wait = Math.max(wait, Math.ceil((entry.windowStart + this.windowMs - now) / 1000));
    }
    return wait;
  }

  recordFailure(keys: string[]): void {
    const now = this.clock.nowMs();
    for (const key of keys) {
      const entry = this.failures.get(key);
      if (!entry || now - entry.windowStart >= this.windowMs) this.failures.set(key, { count: 1, windowStart: now });
      else entry.count += 1;
    }
    if (this.failures.size > 100_000) this.failures.clear(); // bound memory under a credential-stuffing flood
  }

  reset(key: string): void {
    this.failures.delete(key);
  }
}
