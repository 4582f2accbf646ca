// When a schedule (spec 4.2.4) starts and stops its channel. Days and endDate are read in UTC, the way
// the ISO date-times of the schedule are stored.
import type { Schedule, WeekDay } from '../workflows/workflow.schema.js';

const DAY_MS = 24 * 3600_000;
const WEEK_DAY_OF_UTC: readonly WeekDay[] = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

export interface Occurrence {
  /** the scheduled start (startDateTime of this run) */
  startAt: number;
  /** when the channel is started: startAt − startDateTimeShiftMinutes */
  triggerAt: number;
  /** when it is stopped; undefined when the schedule gives neither duration nor stopDateTime */
  stopAt: number | undefined;
}

function occurrence(schedule: Schedule, k: number): Occurrence | undefined {
  const first = Date.parse(schedule.startDateTime);
  const startAt = first + k * DAY_MS;
  const recurrence = schedule.recurrence;
  if (!recurrence && k !== 0) return undefined;
  if (recurrence?.endDate && new Date(startAt).toISOString().slice(0, 10) > recurrence.endDate) return undefined;
  if (recurrence?.unit === 'WEEK' && !recurrence.days?.includes(WEEK_DAY_OF_UTC[new Date(startAt).getUTCDay()] ?? 'SUN')) return undefined;
  const stops: number[] = [];
  if (schedule.duration !== undefined) stops.push(startAt + schedule.duration * 60_000);
  // stopDateTime fixes the length of the first run; later runs of a recurrence keep that length
  if (schedule.stopDateTime !== undefined) stops.push(startAt + (Date.parse(schedule.stopDateTime) - first));
  return { startAt, triggerAt: startAt - (schedule.startDateTimeShiftMinutes ?? 0) * 60_000, stopAt: stops.length ? Math.min(...stops) : undefined };
}

/** The last run whose start was due at or before `now`, whether or not its stop time has passed. */
export function latestDueOccurrence(schedule: Schedule, now: number): Occurrence | undefined {
  const first = Date.parse(schedule.startDateTime);
  const shift = (schedule.startDateTimeShiftMinutes ?? 0) * 60_000;
  let k = Math.floor((now + shift - first) / DAY_MS);
  if (k < 0) return undefined;
  if (!schedule.recurrence) return occurrence(schedule, 0);
  if (schedule.recurrence.endDate) k = Math.min(k, Math.floor((Date.parse(`${schedule.recurrence.endDate}T00:00:00Z`) + DAY_MS - 1 - first) / DAY_MS));
  // at most a week back finds an allowed day of a WEEK recurrence
  for (let step = 0; step < 8 && k >= 0; step += 1, k -= 1) {
    const found = occurrence(schedule, k);
    if (found && found.triggerAt <= now) return found;
  }
  return undefined;
}
