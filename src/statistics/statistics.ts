// Pure computation of GET /channels/statistics (spec 4.2.10): no HTTP, no database, no clock, so the
// rules are tested with tables of event histories. All periods are in UTC.
import { engineError, type FieldProblem } from '../../kernel/core/errors.js';

export const STATISTICS = ['RUNNING', 'CREATED', 'DELETED', 'START_FAILED', 'STOP_FAILED', 'DONE'] as const;
export type Statistic = (typeof STATISTICS)[number];
export const GRANULARITIES = ['HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export interface StatisticsRequest {
  /** YYYY-MM-DD */
  startDate: string;
  /** YYYY-MM-DD */
  endDate: string;
  /** 0–23, HOURLY only: results are >= startHour on startDate */
  startHour?: number | undefined;
  /** 0–23, HOURLY only: results are < endHour on endDate */
  endHour?: number | undefined;
  statistics: readonly Statistic[];
  granularity: Granularity;
  groupBy?: 'REGION' | undefined;
}

export interface StatisticEvent {
  status: string;
  region: string;
  /** epoch ms */
  at: number;
}

export interface TimePeriod {
  start: string;
  end: string;
}
export interface TotalsItem {
  timePeriod: TimePeriod;
  totals: { itemsCount: number };
}
export interface RegionGroupItem {
  dimensionGroup: { dimension: 'REGION'; valueList: Array<{ value: string; totals: { itemsCount: number } }> };
  timePeriod: TimePeriod;
}
export interface StatisticsAnswer {
  items: Array<{ statistic: Statistic; items: TotalsItem[] | RegionGroupItem[] }>;
}

/** Spec 8: how long a range may be. */
export const HOURLY_LIMIT_DAYS = 14;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** [fromMs, toMs): the instants whose events are counted, already widened to whole periods. */
export interface StatisticsRange {
  fromMs: number;
  toMs: number;
}

function dateMs(date: string): number {
  return Date.parse(`${date}T00:00:00Z`);
}

/** Monday 00:00 UTC of the week that holds `ms` (getUTCDay: Sunday is 0). */
function mondayOf(ms: number): number {
  const day = new Date(ms).getUTCDay();
  const dayStart = ms - (ms % DAY_MS);
  return dayStart - ((day + 6) % 7) * DAY_MS;
}

function monthStartOf(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the period after the one starting at `start`. */
function nextPeriod(start: number, granularity: Granularity): number {
  switch (granularity) {
    case 'HOURLY':
      return start + HOUR_MS;
    case 'DAILY':
      return start + DAY_MS;
    case 'WEEKLY':
      return start + 7 * DAY_MS;
    case 'MONTHLY': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
  }
}

function addOneYear(date: string): number {
  const d = new Date(dateMs(date));
  return Date.UTC(d.getUTCFullYear() + 1, d.getUTCMonth(), d.getUTCDate());
}

/**
 * Checks the rules that tie parameters together and returns the counted range. HOURLY: from startHour on
 * startDate to endHour on endDate (exclusive). Otherwise endDate is inclusive and the range is widened to
 * whole periods: WEEKLY starts on the Monday of startDate's week (spec) and, symmetrically, ends with the
 * week holding endDate; MONTHLY runs from the 1st of startDate's month to the end of endDate's month.
 * Throws 400 VALIDATION_FAILED (every bad field) or 400 RANGE_TOO_LONG naming the limit.
 */
export function statisticsRange(request: StatisticsRequest): StatisticsRange {
  const problems: FieldProblem[] = [];
  const hourly = request.granularity === 'HOURLY';
  if (hourly) {
    if (request.startHour === undefined) problems.push({ field: 'startHour', message: 'is required with HOURLY granularity' });
    if (request.endHour === undefined) problems.push({ field: 'endHour', message: 'is required with HOURLY granularity' });
  } else {
    // Spec: "HOURLY only". Refused rather than ignored so that a client never believes it filtered by hour.
    if (request.startHour !== undefined) problems.push({ field: 'startHour', message: 'is allowed only with HOURLY granularity' });
    if (request.endHour !== undefined) problems.push({ field: 'endHour', message: 'is allowed only with HOURLY granularity' });
  }
  const start = dateMs(request.startDate);
  const end = dateMs(request.endDate);
  if (problems.length === 0) {
    const from = hourly ? start + (request.startHour ?? 0) * HOUR_MS : start;
    const to = hourly ? end + (request.endHour ?? 0) * HOUR_MS : end + DAY_MS;
    if (to <= from) {
      problems.push(
        hourly
          ? { field: 'endDate', message: 'endDate and endHour must come after startDate and startHour' }
          : { field: 'endDate', message: 'must not be before startDate' },
      );
    }
  }
  if (problems.length > 0) {
    throw engineError('VALIDATION_FAILED', `invalid query: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, { fields: problems });
  }
  if (hourly) {
    const from = start + (request.startHour ?? 0) * HOUR_MS;
    const to = end + (request.endHour ?? 0) * HOUR_MS;
    if (to - from > HOURLY_LIMIT_DAYS * DAY_MS) {
      throw engineError('RANGE_TOO_LONG', `HOURLY statistics cover at most ${HOURLY_LIMIT_DAYS} days`);
    }
    return { fromMs: from, toMs: to };
  }
  // 1 year: the last day counted must come before the same date one year later (2025-01-01..2025-12-31).
  if (end >= addOneYear(request.startDate)) {
    throw engineError('RANGE_TOO_LONG', `${request.granularity} statistics cover at most 1 year`);
  }
  const lastDayEnd = end + DAY_MS;
  switch (request.granularity) {
    case 'WEEKLY': {
      const from = mondayOf(start);
      return { fromMs: from, toMs: mondayOf(lastDayEnd - 1) + 7 * DAY_MS };
    }
    case 'MONTHLY':
      return { fromMs: monthStartOf(start), toMs: nextPeriod(monthStartOf(lastDayEnd - 1), 'MONTHLY') };
    default:
      return { fromMs: start, toMs: lastDayEnd };
  }
}

/** ISO 8601 UTC without milliseconds, as the other live date-times. */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Counts events per statistic and period. Periods before a statistic's first result are left out; from
 * the first result to the end of the range every period is present (count 0, or an empty valueList).
 * Period ends are exclusive: the start of the next period.
 */
export function computeStatistics(request: StatisticsRequest, events: readonly StatisticEvent[]): StatisticsAnswer {
  const range = statisticsRange(request);
  const periods: number[] = [];
  for (let start = range.fromMs; start < range.toMs; start = nextPeriod(start, request.granularity)) periods.push(start);
  const periodIndex = (at: number): number => {
    // Binary search: the last period starting at or before `at`.
    let low = 0;
    let high = periods.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if ((periods[middle] ?? Infinity) <= at) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  const statistics = [...new Set(request.statistics)];
  return {
    items: statistics.map((statistic) => {
      // counts[period] is a map region → count
      const counts = periods.map(() => new Map<string, number>());
      let first = periods.length;
      for (const event of events) {
        if (event.status !== statistic || event.at < range.fromMs || event.at >= range.toMs) continue;
        const index = periodIndex(event.at);
        const regions = counts[index];
        if (!regions) continue;
        regions.set(event.region, (regions.get(event.region) ?? 0) + 1);
        first = Math.min(first, index);
      }
      const timePeriod = (index: number): TimePeriod => {
        const start = periods[index] ?? range.fromMs;
        return { start: iso(start), end: iso(Math.min(nextPeriod(start, request.granularity), range.toMs)) };
      };
      const indexes = periods.map((_, index) => index).slice(first);
      if (request.groupBy === 'REGION') {
        const items: RegionGroupItem[] = indexes.map((index) => ({
          dimensionGroup: {
            dimension: 'REGION',
            valueList: [...(counts[index] ?? new Map<string, number>())]
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([value, itemsCount]) => ({ value, totals: { itemsCount } })),
          },
          timePeriod: timePeriod(index),
        }));
        return { statistic, items };
      }
      const items: TotalsItem[] = indexes.map((index) => {
        let itemsCount = 0;
        for (const count of (counts[index] ?? new Map<string, number>()).values()) itemsCount += count;
        return { timePeriod: timePeriod(index), totals: { itemsCount } };
      });
      return { statistic, items };
    }),
  };
}
