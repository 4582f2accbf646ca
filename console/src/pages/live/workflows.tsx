// Workflows (spec 4.2.5) with the list's filters: tags (all of them), statuses (any of them), date sort; start and
// stop (4.2.6, 4.2.9) from the list.
import { useState } from 'preact/hooks';
import { api, query } from '../../api';
import { Alert, Field, Loading, Page, Status, Table, when } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import { href } from '../../router';
import type { WorkflowItem } from '../../types';

export const WORKFLOW_STATUSES = ['READY', 'PROVISIONING', 'STARTING', 'RUNNING', 'STOPPING', 'DELETING', 'DONE', 'START_FAILED', 'STOP_FAILED'];
const STARTABLE = new Set(['READY', 'DONE']);
// the engine refuses a stop while a start is under way (409 WORKFLOW_LOCKED): the button waits for RUNNING or a failure
export const STOPPABLE = new Set(['RUNNING', 'STOP_FAILED']);

/** What starting a workflow in this status does, as its button says it: a DONE one is copied and the copy started. */
export function startLabel(status: string): string {
  return status === 'DONE' ? 'Start a copy' : 'Start';
}
export const COPY_NOTE = 'This channel has ended. Starting it again creates a copy of the workflow (same blueprint and settings, a new id) and starts the copy; this one stays DONE, with its archive.';

/** Starts a channel, asking first when that starts a copy; answers the workflow that started (the copy), or null when declined. */
export async function startChannel(id: string, status: string): Promise<string | null> {
  if (status === 'DONE' && !confirm(COPY_NOTE)) return null;
  const answer = await api<{ items: Array<{ workflowId: string }> }>('POST', '/channels', { workflows: [id] });
  return answer.items[0]?.workflowId ?? id;
}
export async function stopChannel(id: string): Promise<void> {
  await api('DELETE', '/channels', { workflows: [id] });
}

export function WorkflowsPage() {
  const [tags, setTags] = useState('');
  const [statuses, setStatuses] = useState<string[]>([]);
  const [sort, setSort] = useState<'desc' | 'asc'>('desc');
  const list = useLoad(
    () => api<{ items: WorkflowItem[] }>('GET', `/workflows${query({ tags: tags.trim(), status: statuses.join(','), sort })}`),
    [tags, statuses.join(','), sort],
    5000,
  );
  const action = useAction();
  const toggle = (status: string) =>
    setStatuses((s) => (s.includes(status) ? s.filter((x) => x !== status) : [...s, status]));
  const act = (fn: () => Promise<void>) => void action.run(async () => { await fn(); list.reload(); });
  return (
    <Page title="Workflows" actions={<a class="button primary" href={href('/live/blueprints')}>New from blueprint</a>}>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Workflow filters">
        <Field label="Tags" hint="all of them, comma separated">
          <input name="tags" value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
        </Field>
        <fieldset class="statuses">
          <legend>Status (any)</legend>
          {WORKFLOW_STATUSES.map((s) => (
            <label key={s} class="check">
              <input type="checkbox" checked={statuses.includes(s)} onChange={() => toggle(s)} /> {s}
            </label>
          ))}
        </fieldset>
        <Field label="Sort by date">
          <select name="sort" value={sort} onChange={(e) => setSort(e.currentTarget.value === 'asc' ? 'asc' : 'desc')}>
            <option value="desc">Newest first</option>
            <option value="asc">Oldest first</option>
          </select>
        </Field>
      </form>
      <Loading loading={list.loading} />
      <Alert error={list.error ?? action.error} />
      <Table label="Workflows">
        <thead>
          <tr><th>Name</th><th>Status</th><th>Tags</th><th>Region</th><th>Created</th><th>Actions</th></tr>
        </thead>
        <tbody>
          {(list.data?.items ?? []).map((w) => (
            <tr key={w.id} data-workflow={w.id}>
              <td><a href={href(`/live/channels/${encodeURIComponent(w.id)}`)}>{w.name}</a></td>
              <td><Status value={w.status} />{w.statusReason ? <div class="muted small-text reason">{w.statusReason}</div> : null}</td>
              <td>{w.tags.map((t) => <span key={t} class="tag">{t}</span>)}</td>
              <td>{w.region}</td>
              <td>{when(w.created)}</td>
              <td class="row">
                <button type="button" class="small" disabled={action.busy || !STARTABLE.has(w.status)} onClick={() => act(async () => { await startChannel(w.id, w.status); })} aria-label={w.status === 'DONE' ? `Start a copy of ${w.name}` : `Start ${w.name}`} title={w.status === 'DONE' ? COPY_NOTE : undefined}>{startLabel(w.status)}</button>
                <button type="button" class="small" disabled={action.busy || !STOPPABLE.has(w.status)} onClick={() => act(() => stopChannel(w.id))} aria-label={`Stop ${w.name}`}>Stop</button>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
      {list.data && list.data.items.length === 0 ? <p class="muted">No workflow matches.</p> : null}
    </Page>
  );
}
