// What one fault of the campaign (issue 32) measured, in one shape for every fault: the tests assert on it at a small
// scale, bench/faults.ts runs each scenario at full scale and prints the rows of the README's "What survives what".

export interface FaultFigures {
  /** the fault, as the table names it ("kill -9 of one ssai process") */
  fault: string;
  /** seconds from the fault until what it broke works again (playable, leased again, API 200); null when nothing broke */
  recoverSeconds: number | null;
  /** requests made during the run that failed (a 5xx, a refused connection, a hang past its bound) */
  requestsFailed: number;
  /** requests made during the run */
  requestsTotal: number;
  /** records, events, jobs or beacons lost (or doubled) by the fault: must be 0 */
  recordsLost: number;
  /** figures of this fault only, named (viewers, p99Ms, fill, discontinuities, ...) */
  details: Record<string, number | string | boolean>;
}

export interface FaultScenarioOptions {
  /** how many simulated viewers play (the tests use a few, the bench the figure) */
  viewers: number;
  /** progress lines for a long run (the bench prints them) */
  log?: (line: string) => void;
}

/** A fault scenario: starts what it needs (or takes the cluster given), injects its fault, measures, cleans up. */
export type FaultScenario = (options: FaultScenarioOptions) => Promise<FaultFigures>;
