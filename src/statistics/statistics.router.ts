import { z } from 'zod';
import type { EngineContext } from '../../kernel/context.js';
import { org } from '../../kernel/http/principal.js';
import { route, type RouteSpec } from '../../kernel/http/route.js';
import { listChannelEvents } from './channel-events.js';
import { computeStatistics, GRANULARITIES, STATISTICS, statisticsRange, type StatisticsRequest } from './statistics.js';

const date = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date YYYY-MM-DD')
  .refine((value) => {
    const parsed = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(value);
  }, 'not a calendar date');

// Digits only: z.coerce.number() read an empty value (and an array) as hour 0.
const hour = z.string().regex(/^\d{1,2}$/, 'an hour 0 to 23').transform(Number).pipe(z.number().int().min(0).max(23));

/** `statistics=RUNNING,DONE` and `statistics=RUNNING&statistics=DONE` (and a mix) mean the same. */
const statisticList = z.preprocess(
  (value) =>
    value === undefined
      ? undefined
      : (Array.isArray(value) ? value : [value])
      .flatMap((item) => (typeof item === 'string' ? item.split(',') : [item]))
      .map((item) => (typeof item === 'string' ? item.trim() : item))
      .filter((item) => item !== ''),
  z.array(z.enum(STATISTICS)).min(1, 'give at least one statistic'),
);

/** Spec 4.2.10: the query of GET /channels/statistics. */
export function statisticsQuery(regions: readonly string[]) {
  return z.object({
    startDate: date,
    endDate: date,
    startHour: hour.optional(),
    endHour: hour.optional(),
    region: z
      .string()
      .optional()
      .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()))
      .refine((value) => value === undefined || regions.includes(value), `one of the regions ${regions.join(', ')}`),
    statistics: statisticList,
    granularity: z.enum(GRANULARITIES),
    groupBy: z.enum(['REGION']).optional(),
  });
}

/**
 * GET /channels/statistics. Registered before the live part so that Express does not take
 * "statistics" for the :workflowId of GET /channels/:workflowId.
 */
export function statisticsRoutes(ctx: EngineContext): RouteSpec[] {
  return [
    route({
      method: 'get', path: '/channels/statistics', tag: 'statistics',
      summary: 'Count workflow status transitions per period (HOURLY, DAILY, WEEKLY, MONTHLY), optionally per region',
      query: statisticsQuery(ctx.config.regions),
      handler: async ({ query, principal }) => {
        const request: StatisticsRequest = {
          startDate: query.startDate, endDate: query.endDate, startHour: query.startHour, endHour: query.endHour,
          statistics: query.statistics, granularity: query.granularity, groupBy: query.groupBy,
        };
        // Validates and fixes the range before reading anything; a blank region means every region.
        const range = statisticsRange(request);
        const events = await listChannelEvents(ctx.store.db, {
          organizationId: org(principal),
          fromMs: range.fromMs,
          toMs: range.toMs,
          statuses: query.statistics,
          ...(query.region ? { region: query.region } : {}),
        });
        return computeStatistics(request, events);
      },
    }),
  ];
}
