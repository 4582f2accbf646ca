// Playlists (spec 2.10, 4.5): ordered VOD sources a virtual channel's listings play. Create, edit (order, add,
// remove sources; ad positions already on a source are kept), delete; durations as the engine computes them.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Alert, Field, Loading, Page, Table } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import type { Envelope, Playlist, PlaylistSource, VodInfo } from '../../types';
import { duration } from '../vod/library';

type StoredSource = PlaylistSource & { substitute?: number; ads?: unknown[] };

interface Draft {
  guid?: string;
  name: string;
  title: string;
  description: string;
  sources: StoredSource[];
}

const EMPTY: Draft = { name: '', title: '', description: '', sources: [] };

/** The write shape of a source: the read-only duration and meta left out. */
const writeSource = (s: StoredSource) => ({
  guid: s.guid, type: 'source',
  ...(s.substitute !== undefined ? { substitute: s.substitute } : {}),
  ...(s.ads && s.ads.length ? { ads: s.ads } : {}),
});

function PlaylistForm(props: { draft: Draft; vods: VodInfo[]; onDone: () => void; onCancel: () => void }) {
  const [d, setD] = useState<Draft>(props.draft);
  const [pick, setPick] = useState('');
  const action = useAction();
  const titleOf = (s: StoredSource) => s.meta?.title ?? props.vods.find((v) => v.guid === s.guid)?.title ?? s.guid;
  const move = (i: number, by: number) => {
    const next = [...d.sources];
    const [s] = next.splice(i, 1);
    if (s) next.splice(Math.max(0, Math.min(next.length, i + by)), 0, s);
    setD({ ...d, sources: next });
  };
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = {
        name: d.name.trim(),
        ...(d.title.trim() ? { title: d.title.trim() } : {}),
        ...(d.description.trim() ? { description: d.description.trim() } : {}),
        sources: d.sources.map(writeSource),
      };
      if (d.guid) await api('PUT', `/broker/playlists/${encodeURIComponent(d.guid)}`, body);
      else await api('POST', '/broker/playlists', body);
      props.onDone();
    });
  };
  return (
    <form class="card form-grid" onSubmit={submit} aria-label={d.guid ? 'Edit playlist' : 'New playlist'}>
      <h2>{d.guid ? `Edit “${props.draft.name}”` : 'New playlist'}</h2>
      <Field label="Name"><input name="name" required value={d.name} onInput={(e) => setD({ ...d, name: e.currentTarget.value })} /></Field>
      <Field label="Title"><input name="title" value={d.title} onInput={(e) => setD({ ...d, title: e.currentTarget.value })} /></Field>
      <Field label="Description"><input name="description" value={d.description} onInput={(e) => setD({ ...d, description: e.currentTarget.value })} /></Field>
      <fieldset class="fields-editor">
        <legend>Sources, in play order</legend>
        {d.sources.length === 0 ? <p class="muted">No source yet: add encoded videos below.</p> : null}
        <ol class="plain">
          {d.sources.map((s, i) => (
            <li key={`${s.guid}-${i}`} class="row">
              <span>{i + 1}. {titleOf(s)}</span>
              {s.duration !== undefined ? <span class="muted small-text">{duration(s.duration)}</span> : null}
              <button type="button" class="small" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move ${titleOf(s)} up`}>↑</button>
              <button type="button" class="small" disabled={i === d.sources.length - 1} onClick={() => move(i, 1)} aria-label={`Move ${titleOf(s)} down`}>↓</button>
              <button type="button" class="small danger" onClick={() => setD({ ...d, sources: d.sources.filter((_, j) => j !== i) })} aria-label={`Remove ${titleOf(s)}`}>Remove</button>
            </li>
          ))}
        </ol>
        <div class="row">
          <select aria-label="Video to add" value={pick} onChange={(e) => setPick(e.currentTarget.value)}>
            <option value="">Choose an encoded video…</option>
            {props.vods.map((v) => <option key={v.guid} value={v.guid}>{v.title ?? v.originalFileName ?? v.guid} ({duration(v.duration)})</option>)}
          </select>
          <button type="button" class="small" disabled={!pick} onClick={() => { setD({ ...d, sources: [...d.sources, { guid: pick, type: 'source' }] }); setPick(''); }}>Add source</button>
        </div>
      </fieldset>
      <Alert error={action.error} />
      <div class="row">
        <button type="submit" class="primary" disabled={action.busy}>{d.guid ? 'Save playlist' : 'Create playlist'}</button>
        {d.guid ? <button type="button" onClick={props.onCancel}>Cancel</button> : null}
      </div>
    </form>
  );
}

export function PlaylistsPage() {
  const list = useLoad(() => api<Envelope<Playlist[]>>('GET', '/broker/playlists'), []);
  const vods = useLoad(() => api<Envelope<VodInfo[]>>('GET', '/broker/vod/list?status=complete'), []);
  const [editing, setEditing] = useState<Draft>(EMPTY);
  const [formKey, setFormKey] = useState(0);
  const action = useAction();
  const reset = () => { setEditing(EMPTY); setFormKey((k) => k + 1); list.reload(); };
  const edit = (p: Playlist) => {
    setEditing({ guid: p.guid, name: p.name, title: p.title ?? '', description: p.description ?? '', sources: p.sources });
    setFormKey((k) => k + 1);
  };
  const remove = (p: Playlist) => {
    if (!confirm(`Delete the playlist ${p.name}?`)) return;
    void action.run(async () => { await api('DELETE', `/broker/playlists/${encodeURIComponent(p.guid)}`); list.reload(); });
  };
  return (
    <Page title="Playlists">
      <PlaylistForm key={formKey} draft={editing} vods={vods.data?.data ?? []} onDone={reset} onCancel={reset} />
      <Loading loading={list.loading} />
      <Alert error={list.error ?? vods.error ?? action.error} />
      <Table label="Playlists">
        <thead><tr><th>Name</th><th>Sources</th><th>Duration</th><th>Actions</th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((p) => (
            <tr key={p.guid} data-playlist={p.guid}>
              <td>{p.name}{p.title ? <div class="muted small-text">{p.title}</div> : null}</td>
              <td>{p.sources.map((s) => s.meta?.title ?? s.guid).join(', ')}</td>
              <td>{duration(p.duration ?? null)}</td>
              <td class="row">
                <button type="button" class="small" onClick={() => edit(p)} aria-label={`Edit ${p.name}`}>Edit</button>
                <button type="button" class="small danger" disabled={action.busy} onClick={() => remove(p)} aria-label={`Delete ${p.name}`}>Delete</button>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
      {list.data && list.data.data.length === 0 ? <p class="muted">No playlist yet.</p> : null}
    </Page>
  );
}
