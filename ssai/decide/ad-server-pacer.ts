// A configuration's ad_server_max_rps (issue 28): the ad server is never asked more than the cap in any second (a log
// of the last `cap` send times), and the sends are smooth within the second (a token bucket holding 100 ms of them), so
// a flood of joining viewers reaches the ad server as a flat rate instead of a spike. Per process: N ssai processes
// behind a balancer ask N times the cap at most.

/**
 * The window the cap counts over, ms: a second and a guard. Between this count and the ad server a request can be
 * held (the decision thread runs nicer than the playlists and waits for a core on a busy machine, then sends what
 * queued at once); counting the cap over 1.1 s keeps up to 100 ms of such bunching within the cap at the ad server's
 * side, for ~9% of the cap.
 */
const WINDOW_MS = 1100;
/**
 * The bucket holds this much of a second's sends: a burst never exceeds a tenth of the cap, and a timer firing up to
 * 100 ms late (a loaded machine) still lets the whole cap through.
 */
const BURST_SHARE = 1 / 10;

export class AdServerPacer {
  /** the send times of the last `maxPerSecond` requests, a ring: `next` is where the next goes (the oldest once full) */
  private readonly sent: Float64Array;
  private next = 0;
  private count = 0;
  private tokens = 1;
  private tokensAt: number;
  private readonly burst: number;

  constructor(readonly maxPerSecond: number, now: number) {
    if (!Number.isInteger(maxPerSecond) || maxPerSecond < 1) throw new RangeError('ad_server_max_rps is a positive integer');
    this.sent = new Float64Array(maxPerSecond);
    this.burst = Math.max(1, maxPerSecond * BURST_SHARE);
    this.tokensAt = now;
  }

  /** How long until the next request may go, ms (0: now). `now` in ms on any steady clock, the same on every call. */
  waitMs(now: number): number {
    this.refill(now);
    let wait = this.tokens >= 1 ? 0 : ((1 - this.tokens) * WINDOW_MS) / this.maxPerSecond;
    if (this.count === this.sent.length) wait = Math.max(wait, this.sent[this.next]! + WINDOW_MS - now);
    return Math.max(0, wait);
  }

  /** A request goes now (after waitMs(now) answered 0). */
  take(now: number): void {
    this.refill(now);
    this.tokens -= 1;
    this.sent[this.next] = now;
    this.next = (this.next + 1) % this.sent.length;
    if (this.count < this.sent.length) this.count++;
  }

  /** The shortest spacing of requests at the cap, ms. */
  get intervalMs(): number {
    return WINDOW_MS / this.maxPerSecond;
  }

  private refill(now: number): void {
    if (now <= this.tokensAt) return;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.tokensAt) * this.maxPerSecond) / WINDOW_MS);
    this.tokensAt = now;
  }
}
