// A workflow's schedule (spec 4.2.4): when the engine starts and stops its channel, once or every day / on chosen
// week days (UTC). Saved with PUT /workflows/{id}, which takes the whole workflow: the other fields go back as read.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Alert, Field } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';

const DAYS = ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'] as const;

interface Schedule {
  startDateTime: string;
  duration?: number;
  stopDateTime?: string;
  startDateTimeShiftMinutes?: number;
  recurrence?: { unit: 'DAY' | 'WEEK'; days?: string[]; endDate?: string };
}

interface WorkflowDetail {
  name: string;
  description: string;
  region: string;
  tags: string[];
  subscriptions: unknown[];
  inputWhitelistCIDRs: string[];
  blueprint: unknown;
  schedule?: Schedule;
}

interface Draft {
  start: string;
  duration: number;
  shift: number;
  unit: '' | 'DAY' | 'WEEK';
  days: string[];
  endDate: string;
}

/** UTC in the form (the recurrence days are UTC days too): "2026-11-24T14:00" ⇄ ISO. */
const toInput = (iso: string): string => iso.slice(0, 16);
const fromInput = (value: string): string => `${value}:00Z`;

function draftOf(s: Schedule | undefined): Draft {
  const next = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString();
  return {
    start: toInput(s?.startDateTime ?? next),
    duration: s?.duration ?? 60,
    shift: s?.startDateTimeShiftMinutes ?? 0,
    unit: s?.recurrence?.unit ?? '',
    days: s?.recurrence?.days ?? [],
    endDate: s?.recurrence?.endDate ?? '',
  };
}

export function describeSchedule(s: Schedule): string {
  const start = new Date(s.startDateTime).toISOString().replace('T', ' ').slice(0, 16);
  const length = s.duration ? `${s.duration} min` : s.stopDateTime ? `until ${s.stopDateTime.replace('T', ' ').slice(0, 16)}` : 'no set stop';
  const repeat = !s.recurrence ? 'once'
    : s.recurrence.unit === 'DAY' ? 'every day' : `every ${(s.recurrence.days ?? []).join(', ')}`;
  return `${start} UTC, ${length}, ${repeat}${s.recurrence?.endDate ? ` until ${s.recurrence.endDate}` : ''}`;
}

export function WorkflowSchedule(props: { workflowId: string; locked: boolean }) {
  const path = `/workflows/${encodeURIComponent(props.workflowId)}`;
  const workflow = useLoad(() => api<WorkflowDetail>('GET', path), [path]);
  // The form shows the stored schedule until the operator edits it: an edit is never overwritten by a load that
  // arrives after it (the form stays disabled until the first load).
  const [edit, setD] = useState<Draft | null>(null);
  const d = edit ?? draftOf(workflow.data?.schedule);
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction();

  const put = (schedule: Schedule | undefined) => void action.run(async () => {
    const w = workflow.data;
    if (!w) return;
    setSaved(null);
    await api('PUT', path, {
      name: w.name, description: w.description, region: w.region, tags: w.tags, subscriptions: w.subscriptions,
      inputWhitelistCIDRs: w.inputWhitelistCIDRs, blueprint: w.blueprint, ...(schedule ? { schedule } : {}),
    });
    setSaved(schedule ? 'Schedule saved.' : 'Schedule removed.');
    setD(null);
    workflow.reload();
  });
  const save = (e: Event) => {
    e.preventDefault();
    put({
      startDateTime: fromInput(d.start),
      duration: d.duration,
      ...(d.shift ? { startDateTimeShiftMinutes: d.shift } : {}),
      ...(d.unit ? { recurrence: { unit: d.unit, ...(d.unit === 'WEEK' ? { days: d.days } : {}), ...(d.endDate ? { endDate: d.endDate } : {}) } } : {}),
    });
  };
  const toggleDay = (day: string) => setD({ ...d, days: d.days.includes(day) ? d.days.filter((x) => x !== day) : DAYS.filter((x) => x === day || d.days.includes(x)) });
  const current = workflow.data?.schedule;
  return (
    <section aria-labelledby="schedule-title">
      <h2 id="schedule-title">Schedule</h2>
      <p data-testid="workflow-schedule">{current ? describeSchedule(current) : 'Not scheduled: started and stopped by hand.'}</p>
      <form class="card form-grid" onSubmit={save} aria-label="Workflow schedule">
        <fieldset class="bare" disabled={!workflow.data}>
        <Field label="Start (UTC)"><input type="datetime-local" required value={d.start} onInput={(e) => setD({ ...d, start: e.currentTarget.value })} /></Field>
        <Field label="Duration (minutes)" hint="5 to 720"><input type="number" min={5} max={720} required value={d.duration} onInput={(e) => setD({ ...d, duration: Number(e.currentTarget.value) })} /></Field>
        <Field label="Start early by (minutes)"><input type="number" min={0} max={1440} value={d.shift} onInput={(e) => setD({ ...d, shift: Number(e.currentTarget.value) })} /></Field>
        <Field label="Repeat">
          <select value={d.unit} onChange={(e) => setD({ ...d, unit: e.currentTarget.value as Draft['unit'] })}>
            <option value="">Once</option>
            <option value="DAY">Every day</option>
            <option value="WEEK">On week days…</option>
          </select>
        </Field>
        {d.unit === 'WEEK' ? (
          <fieldset class="statuses">
            <legend>Days (UTC)</legend>
            {DAYS.map((day) => <label key={day} class="check"><input type="checkbox" checked={d.days.includes(day)} onChange={() => toggleDay(day)} /> {day}</label>)}
          </fieldset>
        ) : null}
        {d.unit ? <Field label="Last day (optional)"><input type="date" value={d.endDate} onInput={(e) => setD({ ...d, endDate: e.currentTarget.value })} /></Field> : null}
        </fieldset>
        <Alert error={workflow.error ?? action.error} />
        <div class="row">
          <button type="submit" class="primary" disabled={action.busy || props.locked || !workflow.data}>Save schedule</button>
          {current ? <button type="button" disabled={action.busy || props.locked} onClick={() => put(undefined)}>Remove schedule</button> : null}
          {saved ? <span role="status">{saved}</span> : null}
        </div>
      </form>
    </section>
  );
}
