// The open-loop schedule of the capacity benches: viewer i joins at a random moment of the ramp and reloads every
// period from there, at its own phase. Sorted by phase, one cursor walks the schedule round by round, checked every
// millisecond; a late send keeps its scheduled time (latency counts from it), and a viewer is skipped until it joined.

export interface ViewerSchedule {
  viewers: number;
  rampMs: number;
  periodMs: number;
  /** when round 0 starts and when sending stops (performance.now() times) */
  t0: number;
  end: number;
  /** one send of viewer i, scheduled at `at` */
  fire(i: number, at: number): void;
  /** before each check of the schedule (a bench starts its measurement here) */
  onTick?(now: number): void;
}

/** Walks the schedule until `end`; resolves then (the sends' answers may still be on their way). */
export function runViewerSchedule(s: ViewerSchedule): Promise<void> {
  const join = Array.from({ length: s.viewers }, () => Math.random() * s.rampMs);
  const phase = join.map((j) => j % s.periodMs);
  const firstRound = join.map((j) => Math.floor(j / s.periodMs));
  const order = phase.map((_, i) => i).sort((a, b) => phase[a]! - phase[b]!);
  let round = 0, cursor = 0;
  return new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      s.onTick?.(now);
      for (;;) {
        const i = order[cursor]!;
        const at = s.t0 + round * s.periodMs + phase[i]!;
        if (at > now || at >= s.end) break;
        if (round >= firstRound[i]!) s.fire(i, at);
        if (++cursor === s.viewers) { cursor = 0; round++; }
      }
      if (now >= s.end) resolve(); else setTimeout(tick, 1);
    };
    tick();
  });
}
