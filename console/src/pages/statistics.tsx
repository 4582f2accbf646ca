// Channel statistics (spec 4.2.10) as charts: one per statistic, or per region with groupBy=REGION. The form keeps
// the endpoint's rules visible (HOURLY takes hours and at most 14 days; the others at most a year).
import { useMemo, useState } from 'preact/hooks';
import { api, query } from '../api';
import { Chart, type ChartSeries } from '../components/chart';
import { Alert, Field, Loading, Page } from '../components/ui';
import { useLoad } from '../hooks';
import type { Region } from '../types';

const STATISTICS = ['RUNNING', 'CREATED', 'DELETED', 'START_FAILED', 'STOP_FAILED', 'DONE'] as const;
const GRANULARITIES = ['HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY'] as const;

interface Period {
  timePeriod: { start: string; end: string };
  totals?: { itemsCount: number };
  dimensionGroup?: { dimension: string; valueList: Array<{ value: string; totals: { itemsCount: number } }> };
}
interface StatisticsAnswer {
  items: Array<{ statistic: string; items: Period[] }>;
}

const day = (offset: number): string => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** A period's label at its granularity: 14:00 (11-24 at midnight) for hours, 2026-11-24 for days, 2026-11 for months. */
function periodLabel(start: string, granularity: string): string {
  if (granularity === 'HOURLY') return start.slice(11, 13) === '00' ? start.slice(5, 10) : `${start.slice(11, 13)}:00`;
  if (granularity === 'MONTHLY') return start.slice(0, 7);
  return start.slice(0, 10);
}

function chartOf(stat: { statistic: string; items: Period[] }, byRegion: boolean, granularity: string): { x: number[]; labels: string[]; series: ChartSeries[] } {
  const x = stat.items.map((p) => Date.parse(p.timePeriod.start) / 1000);
  const labels = stat.items.map((p) => periodLabel(p.timePeriod.start, granularity));
  if (!byRegion) return { x, labels, series: [{ label: stat.statistic, values: stat.items.map((p) => p.totals?.itemsCount ?? 0) }] };
  const regions = [...new Set(stat.items.flatMap((p) => p.dimensionGroup?.valueList.map((v) => v.value) ?? []))];
  return {
    x,
    labels,
    series: regions.map((r) => ({
      label: r,
      values: stat.items.map((p) => p.dimensionGroup?.valueList.find((v) => v.value === r)?.totals.itemsCount ?? 0),
    })),
  };
}

/** The date after `date` (YYYY-MM-DD, UTC). */
const nextDay = (date: string): string => {
  const t = Date.parse(date);
  return Number.isNaN(t) ? date : new Date(t + 86_400_000).toISOString().slice(0, 10);
};

export function StatisticsPage() {
  const regions = useLoad(() => api<{ items: Region[] }>('GET', '/regions'), []);
  const [form, setForm] = useState({ startDate: day(-30), endDate: day(0), startHour: '0', endHour: '24', granularity: 'DAILY', region: '', byRegion: false });
  const [chosen, setChosen] = useState<string[]>(['RUNNING', 'START_FAILED', 'DONE']);
  const hourly = form.granularity === 'HOURLY';
  // The endpoint's endHour is exclusive and at most 23 (spec 4.2.10): "to hour 24", the end of the To day (the form's
  // default, so today's last hour is counted too), is asked as hour 0 of the next day.
  const endOfDay = hourly && form.endHour === '24';
  const requestEndDate = endOfDay ? nextDay(form.endDate) : form.endDate;
  const path = `/channels/statistics${query({
    startDate: form.startDate,
    endDate: requestEndDate,
    granularity: form.granularity,
    statistics: chosen.join(','),
    region: form.region,
    groupBy: form.byRegion ? 'REGION' : undefined,
    startHour: hourly ? form.startHour : undefined,
    endHour: hourly ? (endOfDay ? '0' : form.endHour) : undefined,
  })}`;
  // The endpoint's limits (spec 4.2.10) checked here first, so an impossible choice says why instead of asking.
  const days = (Date.parse(form.endDate) - Date.parse(form.startDate)) / 86_400_000;
  const hours = (Date.parse(requestEndDate) - Date.parse(form.startDate)) / 3_600_000 + Number(endOfDay ? 0 : form.endHour) - Number(form.startHour);
  const problem = Number.isNaN(days) ? 'Choose both dates.'
    : days < 0 ? 'The start date is after the end date.'
      : hourly && hours > 14 * 24 ? 'Hourly statistics cover at most 14 days.'
        : !hourly && days > 366 ? 'Statistics cover at most a year.'
          : chosen.length === 0 ? 'Choose at least one statistic.' : null;
  const stats = useLoad(() => (problem ? Promise.resolve({ items: [] }) : api<StatisticsAnswer>('GET', path)), [path, problem]);
  const charts = useMemo(() => (stats.data?.items ?? []).map((s) => ({ statistic: s.statistic, ...chartOf(s, form.byRegion, form.granularity) })), [stats.data, form.byRegion, form.granularity]);
  const set = (k: keyof typeof form) => (e: { currentTarget: { value: string } }) => setForm({ ...form, [k]: e.currentTarget.value });
  const toggle = (s: string) => setChosen((c) => (c.includes(s) ? c.filter((x) => x !== s) : [...c, s]));
  return (
    <Page title="Statistics">
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Statistics query">
        <Field label="From"><input type="date" name="startDate" value={form.startDate} onInput={set('startDate')} /></Field>
        <Field label="To"><input type="date" name="endDate" value={form.endDate} onInput={set('endDate')} /></Field>
        <Field label="Granularity">
          <select name="granularity" value={form.granularity} onChange={(e) => {
            const granularity = e.currentTarget.value;
            // Hourly covers at most 14 days: a longer range shrinks to the last day of it.
            const tooLong = granularity === 'HOURLY' && Date.parse(form.endDate) - Date.parse(form.startDate) >= 14 * 86_400_000;
            setForm({ ...form, granularity, ...(tooLong ? { startDate: new Date(Date.parse(form.endDate) - 86_400_000).toISOString().slice(0, 10) } : {}) });
          }}>
            {GRANULARITIES.map((g) => <option key={g} value={g}>{g.toLowerCase()}</option>)}
          </select>
        </Field>
        {hourly ? (
          <>
            <Field label="From hour"><input type="number" min={0} max={23} name="startHour" value={form.startHour} onInput={set('startHour')} /></Field>
            <Field label="To hour (exclusive; 24: the whole day)"><input type="number" min={0} max={24} name="endHour" value={form.endHour} onInput={set('endHour')} /></Field>
          </>
        ) : null}
        <Field label="Region">
          <select name="region" value={form.region} onChange={set('region')}>
            <option value="">All regions</option>
            {(regions.data?.items ?? []).map((r) => <option key={r.name} value={r.name}>{r.name}</option>)}
          </select>
        </Field>
        <label class="check"><input type="checkbox" checked={form.byRegion} onChange={(e) => setForm({ ...form, byRegion: e.currentTarget.checked })} /> Per region</label>
        <fieldset class="statuses">
          <legend>Statistics</legend>
          {STATISTICS.map((s) => (
            <label key={s} class="check"><input type="checkbox" checked={chosen.includes(s)} onChange={() => toggle(s)} /> {s}</label>
          ))}
        </fieldset>
      </form>
      <Loading loading={stats.loading} />
      <Alert error={problem ?? stats.error} />
      <div class="charts">
        {charts.map((c) => (
          c.x.length === 0
            ? <p key={c.statistic} class="muted">{c.statistic}: nothing in this range.</p>
            : <Chart key={c.statistic} title={c.statistic} x={c.x} labels={c.labels} series={c.series} unit="channels" bars />
        ))}
      </div>
    </Page>
  );
}
