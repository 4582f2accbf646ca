// One channel (spec 2.3, 4.2.7–4.2.12): status and reason, ingest endpoints to copy, previews of the output and of
// its SSAI playback URL, a "break now" button for dynamic ads, alarms and the graphs.
import { useMemo, useState } from 'preact/hooks';
import { api } from '../../api';
import { Chart } from '../../components/chart';
import { Player } from '../../components/player';
import { Alert, CopyButton, Field, Loading, Page, Status, Table, when } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import { href, navigate } from '../../router';
import type { ChannelDetail, GraphAnswer } from '../../types';
import { WorkflowSchedule } from './workflow-schedule';
import { COPY_NOTE, startChannel, startLabel, stopChannel, STOPPABLE } from './workflows';

const METRICS = ['NETWORK_IN', 'NETWORK_OUT', 'DROPPED_FRAMES', 'ACTIVE_ALERTS', 'INPUT_VIDEO_FRAME_RATE', 'FILL_MS', 'UDP_INPUT_LOSS', 'SVQ_TIME'] as const;
const BUSY = new Set(['PROVISIONING', 'STARTING', 'STOPPING', 'DELETING']);

interface AlarmItem {
  id: string;
  code: string;
  message: string;
  severity: string;
  active: boolean;
  raisedDateTime: string;
  clearedDateTime?: string;
}

function BreakNow(props: { workflowId: string; running: boolean }) {
  const [duration, setDuration] = useState(30);
  const [answer, setAnswer] = useState<string | null>(null);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const r = await api<{ startsAt: string; duration: number }>('POST', `/channels/${encodeURIComponent(props.workflowId)}/dynamic-ads`, { duration });
      setAnswer(`A ${r.duration} s break starts at ${new Date(r.startsAt).toLocaleTimeString()}.`);
    });
  };
  return (
    <form class="row" onSubmit={submit} aria-label="Break now">
      <Field label="Break length (s)">
        <input type="number" min={1} max={600} value={duration} onInput={(e) => setDuration(Number(e.currentTarget.value))} />
      </Field>
      <button type="submit" class="primary" disabled={action.busy || !props.running}>Break now</button>
      {answer ? <span role="status">{answer}</span> : null}
      <Alert error={action.error} />
    </form>
  );
}

function Graphs(props: { workflowId: string }) {
  const graphs = useLoad(
    () => Promise.all(METRICS.map((metric) => api<GraphAnswer>('GET', `/channels/${encodeURIComponent(props.workflowId)}/graphs?metric=${metric}`))),
    [props.workflowId],
    30_000,
  );
  const charts = useMemo(() => (graphs.data ?? []).map((g) => ({
    metric: g.metric,
    unit: g.unit,
    x: g.points.map((p) => Date.parse(p.timestamp) / 1000),
    series: [{ label: g.metric, values: g.points.map((p) => p.value) }],
  })), [graphs.data]);
  return (
    <section aria-labelledby="graphs-title">
      <h2 id="graphs-title">Graphs (last hour)</h2>
      <Alert error={graphs.error} />
      <div class="charts">
        {charts.map((c) => (c.x.length === 0
          ? <figure key={c.metric} class="chart empty" aria-label={c.metric}><figcaption>{c.metric.replace(/_/g, ' ').toLowerCase()}</figcaption><p class="muted">No samples.</p></figure>
          : <Chart key={c.metric} title={c.metric.replace(/_/g, ' ').toLowerCase()} unit={c.unit} x={c.x} series={c.series} />))}
      </div>
    </section>
  );
}

export function ChannelPage(props: { workflowId: string }) {
  const id = encodeURIComponent(props.workflowId);
  const [poll, setPoll] = useState(3000);
  const channel = useLoad(async () => {
    const c = await api<ChannelDetail>('GET', `/channels/${id}`);
    setPoll(BUSY.has(c.channelStatus) ? 1500 : 5000);
    return c;
  }, [id], poll);
  const [history, setHistory] = useState(false);
  const alarms = useLoad(() => api<{ items: AlarmItem[] }>('GET', `/channels/${id}/alarms?history=${history}`), [id, history], 10_000);
  const action = useAction();
  const c = channel.data;
  const act = (fn: () => Promise<void>) => void action.run(async () => { await fn(); channel.reload(); });
  // a DONE channel starts as a copy, a new workflow: go to the copy's page
  const start = (status: string) => act(async () => {
    const started = await startChannel(props.workflowId, status);
    if (started && started !== props.workflowId) navigate(`/live/channels/${encodeURIComponent(started)}`);
  });
  const switchTo = (input: string) => act(async () => { await api('POST', `/channels/${id}/input-switch`, { input }); });
  const remove = () => {
    if (!confirm('Delete this workflow? A running channel is stopped first.')) return;
    void action.run(async () => { await api('DELETE', `/workflows/${id}`); navigate('/live/workflows'); });
  };
  return (
    <Page
      title={c ? c.name : 'Channel'}
      actions={c ? (
        <>
          <button type="button" class="primary" disabled={action.busy || !(c.channelStatus === 'READY' || c.channelStatus === 'DONE')} title={c.channelStatus === 'DONE' ? COPY_NOTE : undefined} onClick={() => start(c.channelStatus)}>{startLabel(c.channelStatus)}</button>
          <button type="button" disabled={action.busy || !STOPPABLE.has(c.channelStatus)} onClick={() => act(() => stopChannel(props.workflowId))}>Stop</button>
          <button type="button" class="danger" disabled={action.busy || BUSY.has(c.channelStatus)} onClick={remove}>Delete</button>
        </>
      ) : null}
    >
      <p><a href={href('/live/workflows')}>← Workflows</a></p>
      <Loading loading={channel.loading} />
      <Alert error={channel.error ?? action.error} />
      {c ? (
        <>
          <dl class="facts" aria-label="Channel status">
            <dt>Status</dt><dd><Status value={c.channelStatus} /></dd>
            <dt>Reason</dt><dd data-testid="status-reason">{c.statusReason ?? '—'}</dd>
            <dt>Region</dt><dd>{c.region}</dd>
            <dt>Start requested</dt><dd>{when(c.startRequestedDateTime)}</dd>
            <dt>Started</dt><dd>{when(c.startedDateTime)}</dd>
            <dt>Stop requested</dt><dd>{when(c.stopRequestedDateTime)}</dd>
            <dt>Stopped</dt><dd>{when(c.stoppedDateTime)}</dd>
            <dt>Archive</dt><dd>{c.archive.url ? <a href={c.archive.url}>{c.archive.status}</a> : c.archive.status}</dd>
          </dl>

          <section aria-labelledby="ingest-title">
            <h2 id="ingest-title">Ingest endpoints</h2>
            {c.inputs.length === 0 ? <p class="muted">No ingest endpoint yet: the channel has not started.</p> : (
              <ul class="plain">
                {c.inputs.map((input, i) => (
                  <li key={input.name}>
                    <strong>{input.name}</strong> <span class="tag">{input.type}</span>{c.activeInput === input.name ? <span class="badge">active</span> : null}
                    {c.channelStatus === 'RUNNING' && c.inputs.length > 1 && c.activeInput !== input.name
                      ? <button type="button" class="small" disabled={action.busy} onClick={() => switchTo(input.name)}>Switch to {input.name}</button>
                      : null}
                    <div><CopyButton text={input.url} label={`ingest-${i}`} /></div>
                    {input.streamKey ? <div>Stream key <CopyButton text={input.streamKey} label={`key-${i}`} /></div> : null}
                  </li>
                ))}
              </ul>
            )}
          </section>

          <section aria-labelledby="outputs-title">
            <h2 id="outputs-title">Outputs</h2>
            {c.outputs.length === 0 ? <p class="muted">No playback output yet.</p> : null}
            <div class="players">
              {c.outputs.filter((o) => o.type.toUpperCase().includes('HLS') || o.url.includes('.m3u8')).flatMap((o) => [
                <div key={`${o.destinationId}-out`} class="card">
                  <h3>Output {o.destinationId}</h3>
                  <CopyButton text={o.url} label={`out-${o.destinationId}`} />
                  {c.channelStatus === 'RUNNING' ? <Player src={o.url} label={`Preview of ${o.destinationId}`} /> : null}
                </div>,
                o.ssaiPlaybackUrl ? (
                  <div key={`${o.destinationId}-ssai`} class="card">
                    <h3>With ads (SSAI) {o.destinationId}</h3>
                    <CopyButton text={o.ssaiPlaybackUrl} label={`ssai-${o.destinationId}`} />
                    {c.channelStatus === 'RUNNING' ? <Player src={o.ssaiPlaybackUrl} label={`SSAI preview of ${o.destinationId}`} /> : null}
                  </div>
                ) : null,
              ])}
            </div>
          </section>

          <WorkflowSchedule workflowId={props.workflowId} locked={BUSY.has(c.channelStatus)} />

          <section aria-labelledby="ads-title">
            <h2 id="ads-title">Dynamic ads</h2>
            <BreakNow workflowId={props.workflowId} running={c.channelStatus === 'RUNNING'} />
          </section>

          <section aria-labelledby="alarms-title">
            <h2 id="alarms-title">Alarms</h2>
            <label class="check"><input type="checkbox" checked={history} onChange={(e) => setHistory(e.currentTarget.checked)} /> Show history</label>
            <Alert error={alarms.error} />
            {(alarms.data?.items.length ?? 0) === 0 ? <p class="muted">No {history ? '' : 'active '}alarm.</p> : (
              <Table label="Alarms">
                <thead><tr><th>Severity</th><th>Code</th><th>Message</th><th>Raised</th><th>Cleared</th></tr></thead>
                <tbody>
                  {alarms.data?.items.map((a) => (
                    <tr key={a.id}><td>{a.severity}</td><td>{a.code}</td><td>{a.message}</td><td>{when(a.raisedDateTime)}</td><td>{when(a.clearedDateTime)}</td></tr>
                  ))}
                </tbody>
              </Table>
            )}
          </section>

          <Graphs workflowId={props.workflowId} />
        </>
      ) : null}
    </Page>
  );
}
