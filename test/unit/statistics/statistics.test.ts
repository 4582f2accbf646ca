import { describe, expect, it } from 'vitest';
import { computeStatistics, statisticsRange, type StatisticEvent, type StatisticsRequest } from '../../../src/statistics/statistics.js';
import { isEngineError } from '../../../kernel/core/errors.js';

const ev = (status: string, at: string, region = 'local'): StatisticEvent => ({ status, region, at: Date.parse(at) });

/** [period start, count] pairs: the compact form of the expected answer of one statistic. */
type Expected = Array<[string, number]>;
/** [period start, [[region, count]…]] pairs for groupBy=REGION. */
type ExpectedByRegion = Array<[string, Array<[string, number]>]>;

interface Case {
  name: string;
  request: StatisticsRequest;
  events: StatisticEvent[];
  expected: Record<string, Expected>;
}

const cases: Case[] = [
  {
    name: 'DAILY: periods before the first result omitted, zeros after it, events outside the range ignored',
    request: { startDate: '2026-01-01', endDate: '2026-01-05', statistics: ['RUNNING', 'CREATED', 'DONE'], granularity: 'DAILY' },
    events: [
      ev('RUNNING', '2025-12-31T23:59:59Z'),
      ev('RUNNING', '2026-01-02T10:00:00Z'),
      ev('RUNNING', '2026-01-02T23:59:59Z'),
      ev('RUNNING', '2026-01-04T00:00:00Z'),
      ev('CREATED', '2026-01-03T12:00:00Z'),
      ev('STOP_FAILED', '2026-01-03T12:00:00Z'),
      ev('RUNNING', '2026-01-06T00:00:00Z'),
    ],
    expected: {
      RUNNING: [['2026-01-02T00:00:00Z', 2], ['2026-01-03T00:00:00Z', 0], ['2026-01-04T00:00:00Z', 1], ['2026-01-05T00:00:00Z', 0]],
      CREATED: [['2026-01-03T00:00:00Z', 1], ['2026-01-04T00:00:00Z', 0], ['2026-01-05T00:00:00Z', 0]],
      DONE: [],
    },
  },
  {
    name: 'HOURLY: results >= startHour on startDate and < endHour on endDate, across midnight',
    request: { startDate: '2026-01-05', startHour: 20, endDate: '2026-01-06', endHour: 2, statistics: ['START_FAILED'], granularity: 'HOURLY' },
    events: [
      ev('START_FAILED', '2026-01-05T19:59:59Z'),
      ev('START_FAILED', '2026-01-05T21:30:00Z'),
      ev('START_FAILED', '2026-01-06T01:59:59Z'),
      ev('START_FAILED', '2026-01-06T02:00:00Z'),
    ],
    expected: {
      START_FAILED: [
        ['2026-01-05T21:00:00Z', 1], ['2026-01-05T22:00:00Z', 0], ['2026-01-05T23:00:00Z', 0], ['2026-01-06T00:00:00Z', 0], ['2026-01-06T01:00:00Z', 1],
      ],
    },
  },
  {
    name: 'WEEKLY: the first period starts on the Monday of the week holding startDate',
    request: { startDate: '2026-01-07', endDate: '2026-01-20', statistics: ['DELETED'], granularity: 'WEEKLY' },
    events: [ev('DELETED', '2026-01-05T01:00:00Z'), ev('DELETED', '2026-01-19T08:00:00Z'), ev('DELETED', '2026-01-25T23:00:00Z')],
    expected: { DELETED: [['2026-01-05T00:00:00Z', 1], ['2026-01-12T00:00:00Z', 0], ['2026-01-19T00:00:00Z', 2]] },
  },
  {
    name: 'MONTHLY: periods from the 1st, across a year boundary',
    request: { startDate: '2025-11-20', endDate: '2026-02-10', statistics: ['DONE', 'RUNNING'], granularity: 'MONTHLY' },
    events: [
      ev('DONE', '2025-11-01T00:00:00Z'),
      ev('RUNNING', '2026-01-10T00:00:00Z'),
      ev('RUNNING', '2026-01-31T23:59:59Z'),
      ev('RUNNING', '2026-02-28T12:00:00Z'),
      ev('RUNNING', '2026-03-01T00:00:00Z'),
    ],
    expected: {
      DONE: [['2025-11-01T00:00:00Z', 1], ['2025-12-01T00:00:00Z', 0], ['2026-01-01T00:00:00Z', 0], ['2026-02-01T00:00:00Z', 0]],
      RUNNING: [['2026-01-01T00:00:00Z', 2], ['2026-02-01T00:00:00Z', 1]],
    },
  },
];

function compact(items: unknown): Expected {
  return (items as Array<{ timePeriod: { start: string }; totals: { itemsCount: number } }>).map((item) => [item.timePeriod.start, item.totals.itemsCount]);
}

function compactByRegion(items: unknown): ExpectedByRegion {
  return (items as Array<{ timePeriod: { start: string }; dimensionGroup: { dimension: string; valueList: Array<{ value: string; totals: { itemsCount: number } }> } }>).map((item) => {
    expect(item.dimensionGroup.dimension).toBe('REGION');
    return [item.timePeriod.start, item.dimensionGroup.valueList.map((value) => [value.value, value.totals.itemsCount] as [string, number])];
  });
}

describe('channel statistics computation', () => {
  for (const testCase of cases) {
    it(testCase.name, () => {
      const answer = computeStatistics(testCase.request, testCase.events);
      expect(answer.items.map((item) => item.statistic)).toEqual(Object.keys(testCase.expected));
      for (const item of answer.items) expect(compact(item.items), item.statistic).toEqual(testCase.expected[item.statistic]);
    });
  }

  it('gives each period its start and exclusive end', () => {
    const answer = computeStatistics(
      { startDate: '2026-01-07', endDate: '2026-01-20', statistics: ['DELETED'], granularity: 'WEEKLY' },
      [ev('DELETED', '2026-01-13T00:00:00Z')],
    );
    expect(answer.items[0]?.items[0]?.timePeriod).toEqual({ start: '2026-01-12T00:00:00Z', end: '2026-01-19T00:00:00Z' });
    const monthly = computeStatistics({ startDate: '2026-02-03', endDate: '2026-02-03', statistics: ['DONE'], granularity: 'MONTHLY' }, [ev('DONE', '2026-02-14T00:00:00Z')]);
    expect(monthly.items[0]?.items).toEqual([{ timePeriod: { start: '2026-02-01T00:00:00Z', end: '2026-03-01T00:00:00Z' }, totals: { itemsCount: 1 } }]);
  });

  const regionEvents = [
    ev('RUNNING', '2026-01-02T05:00:00Z', 'local'),
    ev('RUNNING', '2026-01-02T06:00:00Z', 'eu-west'),
    ev('RUNNING', '2026-01-02T07:00:00Z', 'eu-west'),
    ev('RUNNING', '2026-01-04T07:00:00Z', 'eu-west'),
    ev('CREATED', '2026-01-01T00:00:00Z', 'local'),
  ];
  const groupCases: Array<{ name: string; request: StatisticsRequest; expected: Record<string, ExpectedByRegion> }> = [
    {
      name: 'DAILY by region: regions sorted, empty valueList for a period with nothing',
      request: { startDate: '2026-01-01', endDate: '2026-01-04', statistics: ['RUNNING', 'CREATED', 'DELETED'], granularity: 'DAILY', groupBy: 'REGION' },
      expected: {
        RUNNING: [
          ['2026-01-02T00:00:00Z', [['eu-west', 2], ['local', 1]]],
          ['2026-01-03T00:00:00Z', []],
          ['2026-01-04T00:00:00Z', [['eu-west', 1]]],
        ],
        CREATED: [
          ['2026-01-01T00:00:00Z', [['local', 1]]],
          ['2026-01-02T00:00:00Z', []],
          ['2026-01-03T00:00:00Z', []],
          ['2026-01-04T00:00:00Z', []],
        ],
        DELETED: [],
      },
    },
    {
      name: 'HOURLY by region',
      request: { startDate: '2026-01-02', startHour: 4, endDate: '2026-01-02', endHour: 8, statistics: ['RUNNING'], granularity: 'HOURLY', groupBy: 'REGION' },
      expected: {
        RUNNING: [
          ['2026-01-02T05:00:00Z', [['local', 1]]],
          ['2026-01-02T06:00:00Z', [['eu-west', 1]]],
          ['2026-01-02T07:00:00Z', [['eu-west', 1]]],
        ],
      },
    },
    {
      name: 'WEEKLY by region',
      request: { startDate: '2026-01-01', endDate: '2026-01-12', statistics: ['RUNNING'], granularity: 'WEEKLY', groupBy: 'REGION' },
      expected: {
        RUNNING: [
          ['2025-12-29T00:00:00Z', [['eu-west', 3], ['local', 1]]],
          ['2026-01-05T00:00:00Z', []],
          ['2026-01-12T00:00:00Z', []],
        ],
      },
    },
    {
      name: 'MONTHLY by region',
      request: { startDate: '2025-12-15', endDate: '2026-01-15', statistics: ['RUNNING'], granularity: 'MONTHLY', groupBy: 'REGION' },
      expected: { RUNNING: [['2026-01-01T00:00:00Z', [['eu-west', 3], ['local', 1]]]] },
    },
  ];
  for (const testCase of groupCases) {
    it(testCase.name, () => {
      const answer = computeStatistics(testCase.request, regionEvents);
      expect(answer.items.map((item) => item.statistic)).toEqual(Object.keys(testCase.expected));
      for (const item of answer.items) expect(compactByRegion(item.items), item.statistic).toEqual(testCase.expected[item.statistic]);
    });
  }

  it('counts a statistic named twice once', () => {
    const answer = computeStatistics({ startDate: '2026-01-01', endDate: '2026-01-01', statistics: ['DONE', 'DONE'], granularity: 'DAILY' }, [ev('DONE', '2026-01-01T03:00:00Z')]);
    expect(answer.items).toHaveLength(1);
  });
});

describe('statistics range rules', () => {
  const codeOf = (request: StatisticsRequest): string | undefined => {
    try {
      statisticsRange(request);
      return undefined;
    } catch (error) {
      return isEngineError(error) ? error.code : 'not an engine error';
    }
  };
  const hourly = (startDate: string, startHour: number, endDate: string, endHour: number): StatisticsRequest => ({ startDate, startHour, endDate, endHour, statistics: ['RUNNING'], granularity: 'HOURLY' });
  const daily = (startDate: string, endDate: string, granularity: StatisticsRequest['granularity'] = 'DAILY'): StatisticsRequest => ({ startDate, endDate, statistics: ['RUNNING'], granularity });

  it.each([
    ['HOURLY exactly 14 days', hourly('2026-01-01', 0, '2026-01-15', 0), undefined],
    ['HOURLY 14 days and 1 hour', hourly('2026-01-01', 0, '2026-01-15', 1), 'RANGE_TOO_LONG'],
    ['HOURLY end before start', hourly('2026-01-02', 5, '2026-01-02', 5), 'VALIDATION_FAILED'],
    ['HOURLY without hours', daily('2026-01-01', '2026-01-02', 'HOURLY'), 'VALIDATION_FAILED'],
    ['DAILY with an hour', { ...daily('2026-01-01', '2026-01-02'), startHour: 3 }, 'VALIDATION_FAILED'],
    ['DAILY one year', daily('2025-01-01', '2025-12-31'), undefined],
    ['DAILY one year and a day', daily('2025-01-01', '2026-01-01'), 'RANGE_TOO_LONG'],
    ['WEEKLY over a year', daily('2025-01-01', '2026-02-01', 'WEEKLY'), 'RANGE_TOO_LONG'],
    ['MONTHLY over a year', daily('2025-03-01', '2026-03-01', 'MONTHLY'), 'RANGE_TOO_LONG'],
    ['DAILY end before start', daily('2026-01-02', '2026-01-01'), 'VALIDATION_FAILED'],
    ['DAILY one day', daily('2026-01-02', '2026-01-02'), undefined],
  ])('%s', (_name, request, code) => {
    expect(codeOf(request)).toBe(code);
  });

  it('names the limit in the message', () => {
    expect(() => statisticsRange(hourly('2026-01-01', 0, '2026-01-20', 0))).toThrow(/14 days/);
    expect(() => statisticsRange(daily('2025-01-01', '2026-06-01', 'MONTHLY'))).toThrow(/1 year/);
  });
});
