// Ad-insertion configurations (spec 2.11, 4.6) and a test-playback link: the playback URL is the masterEndpoint
// followed by the stream's path after source_url (spec 4.2). Each one's page (detail.tsx) edits every field.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Alert, CopyButton, Field, Loading, Page, Table } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import { href } from '../../router';
import type { Adinsert, Envelope } from '../../types';
import { INSERTION_MODES } from './adinsert-draft';

function CreateAdinsert(props: { onCreated: () => void }) {
  const blank = { name: '', type: 'live', source_url: '', ad_server: '', slate_ad: '', insertion_mode: 'stitched' };
  const [form, setForm] = useState(blank);
  const action = useAction();
  const set = (k: keyof typeof form) => (e: { currentTarget: { value: string } }) => setForm({ ...form, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { slate_ad, ...rest } = form;
      await api('POST', '/broker/adinserts', { ...rest, ...(slate_ad.trim() ? { slate_ad: slate_ad.trim() } : {}) });
      setForm(blank);
      props.onCreated();
    });
  };
  return (
    <form class="card form-grid" onSubmit={submit} aria-label="New ad insertion configuration">
      <h2>New configuration</h2>
      <Field label="Name"><input name="name" required value={form.name} onInput={set('name')} /></Field>
      <Field label="Type">
        <select name="type" value={form.type} onChange={set('type')}>
          <option value="live">live (live service)</option>
          <option value="broker">broker (broker service)</option>
        </select>
      </Field>
      <Field label="Origin (source_url)" hint="the base URL the streams are read from"><input name="source_url" type="url" required value={form.source_url} onInput={set('source_url')} /></Field>
      <Field label="Ad server (VAST or VMAP URL)" hint="[session.id], [avail.duration], [cachebuster] … are filled in"><input name="ad_server" required value={form.ad_server} onInput={set('ad_server')} /></Field>
      <Field label="Insertion mode" hint="stitched: ads in the playlist; guided: HLS Interstitials">
        <select name="insertion_mode" value={form.insertion_mode} onChange={set('insertion_mode')}>
          {INSERTION_MODES.map((m) => <option key={m} value={m}>{m}</option>)}
        </select>
      </Field>
      <Field label="Slate image (optional)"><input name="slate_ad" type="url" value={form.slate_ad} onInput={set('slate_ad')} /></Field>
      <Alert error={action.error} />
      <div class="row"><button type="submit" class="primary" disabled={action.busy}>Create</button></div>
    </form>
  );
}

export function TestLink(props: { adinsert: Adinsert }) {
  const [path, setPath] = useState('master.m3u8');
  const url = `${props.adinsert.masterEndpoint}${path.replace(/^\/+/, '')}`;
  return (
    <div class="row">
      <input aria-label={`Stream path for ${props.adinsert.name}`} value={path} onInput={(e) => setPath(e.currentTarget.value)} />
      <a class="button small" href={href(`/play?src=${encodeURIComponent(url)}`)}>Test playback</a>
    </div>
  );
}

export function AdsPage() {
  const list = useLoad(() => api<Envelope<Adinsert[]>>('GET', '/broker/adinserts'), []);
  const action = useAction();
  const remove = (a: Adinsert) => {
    if (!confirm(`Delete ${a.name}?`)) return;
    void action.run(async () => { await api('DELETE', `/broker/adinserts/${encodeURIComponent(a.guid)}`); list.reload(); });
  };
  return (
    <Page title="Ad insertion">
      <CreateAdinsert onCreated={list.reload} />
      <Loading loading={list.loading} />
      <Alert error={list.error ?? action.error} />
      <Table label="Ad insertion configurations">
        <thead><tr><th>Name</th><th>Type</th><th>Mode</th><th>Origin</th><th>Playback base</th><th>Test</th><th></th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((a) => (
            <tr key={a.guid} data-adinsert={a.guid}>
              <td>{a.name}</td>
              <td>{a.type}</td>
              <td data-mode={a.insertionMode}>{a.insertionMode}{a.insertionModeOverride ? ' (overridable)' : ''}</td>
              <td class="wrap">{a.sourceUrl}</td>
              <td><CopyButton text={a.masterEndpoint} label={`master-${a.guid}`} /></td>
              <td><TestLink adinsert={a} /></td>
              <td>
                <div class="row">
                  <a class="button small" href={href(`/ads/${encodeURIComponent(a.guid)}`)} aria-label={`Edit ${a.name}`}>Edit</a>
                  <button type="button" class="small danger" onClick={() => remove(a)} aria-label={`Delete ${a.name}`}>Delete</button>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
    </Page>
  );
}
