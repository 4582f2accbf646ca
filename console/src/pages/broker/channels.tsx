// Broker channels (spec 2.8, 4.3): virtual channels played from their schedule, or external HLS channels; `active`
// decides whether a channel shows in the GUI's player lists. Each links to its schedule page.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Alert, CopyButton, Field, Loading, Page, Table } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import { href } from '../../router';
import type { Adinsert, BrokerChannel, Envelope } from '../../types';

/** The body of PUT/POST (spec 2.8) from a read record: the read-only fields are left out. */
export function channelBody(c: BrokerChannel): Record<string, unknown> {
  return {
    name: c.name,
    description: c.description,
    active: c.active,
    type: c.type,
    ...(c.type === 'externalHLS' && c.externalUrl ? { externalUrl: c.externalUrl } : {}),
    hasAds: c.hasAds,
    ...(c.adinsert ? { adinsert: c.adinsert } : {}),
    allowedForUsers: c.allowedForUsers,
    allowedForRoles: c.allowedForRoles,
    restrictedFor: c.restrictedFor,
    ...(c.loopInterval !== undefined ? { loopInterval: c.loopInterval } : {}),
    ...(c.imageUrl ? { imageUrl: c.imageUrl } : {}),
  };
}

interface Draft {
  name: string;
  description: string;
  type: 'virtual' | 'externalHLS';
  externalUrl: string;
  active: boolean;
  hasAds: boolean;
  adinsert: string;
  loopInterval: string;
}

const EMPTY: Draft = { name: '', description: '', type: 'virtual', externalUrl: '', active: true, hasAds: false, adinsert: '', loopInterval: '' };

function CreateChannel(props: { adinserts: Adinsert[]; onCreated: () => void }) {
  const [d, setD] = useState<Draft>(EMPTY);
  const action = useAction();
  const text = (k: keyof Draft) => (e: { currentTarget: { value: string } }) => setD({ ...d, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api('POST', '/broker/channels', {
        name: d.name.trim(),
        description: d.description,
        active: d.active ? 1 : 0,
        type: d.type,
        ...(d.type === 'externalHLS' ? { externalUrl: d.externalUrl.trim() } : {}),
        hasAds: d.hasAds ? 1 : 0,
        ...(d.hasAds && d.adinsert ? { adinsert: d.adinsert } : {}),
        ...(d.type === 'virtual' && d.loopInterval ? { loopInterval: Number(d.loopInterval) } : {}),
      });
      setD(EMPTY);
      props.onCreated();
    });
  };
  return (
    <form class="card form-grid" onSubmit={submit} aria-label="New broker channel">
      <h2>New channel</h2>
      <Field label="Name"><input name="name" required value={d.name} onInput={text('name')} /></Field>
      <Field label="Description"><input name="description" value={d.description} onInput={text('description')} /></Field>
      <Field label="Type">
        <select name="type" value={d.type} onChange={(e) => setD({ ...d, type: e.currentTarget.value === 'externalHLS' ? 'externalHLS' : 'virtual' })}>
          <option value="virtual">virtual (played from its schedule)</option>
          <option value="externalHLS">external HLS</option>
        </select>
      </Field>
      {d.type === 'externalHLS'
        ? <Field label="External URL (.m3u8)"><input name="externalUrl" type="url" required value={d.externalUrl} onInput={text('externalUrl')} /></Field>
        : <Field label="Loop interval (hours)" hint="replays this far back after the last listing"><input name="loopInterval" type="number" min={0} step="any" value={d.loopInterval} onInput={text('loopInterval')} /></Field>}
      <label class="check"><input type="checkbox" checked={d.active} onChange={(e) => setD({ ...d, active: e.currentTarget.checked })} /> Active (shown in the GUI)</label>
      <label class="check"><input type="checkbox" checked={d.hasAds} onChange={(e) => setD({ ...d, hasAds: e.currentTarget.checked })} /> With ads</label>
      {d.hasAds ? (
        <Field label="Ad insertion configuration">
          <select name="adinsert" required value={d.adinsert} onChange={text('adinsert')}>
            <option value="">Choose…</option>
            {props.adinserts.map((a) => <option key={a.guid} value={a.guid}>{a.name} ({a.type})</option>)}
          </select>
        </Field>
      ) : null}
      <Alert error={action.error} />
      <div class="row"><button type="submit" class="primary" disabled={action.busy}>Create channel</button></div>
    </form>
  );
}

export function BrokerChannelsPage() {
  const list = useLoad(() => api<Envelope<BrokerChannel[]>>('GET', '/broker/channels'), []);
  const adinserts = useLoad(() => api<Envelope<Adinsert[]>>('GET', '/broker/adinserts'), []);
  const action = useAction();
  const toggle = (c: BrokerChannel) =>
    void action.run(async () => { await api('PUT', `/broker/channels/${encodeURIComponent(c.guid)}`, { ...channelBody(c), active: c.active ? 0 : 1 }); list.reload(); });
  const remove = (c: BrokerChannel) => {
    if (!confirm(`Delete the channel ${c.name} and its schedule?`)) return;
    void action.run(async () => { await api('DELETE', `/broker/channels/${encodeURIComponent(c.guid)}`); list.reload(); });
  };
  return (
    <Page title="Broker channels">
      <CreateChannel adinserts={adinserts.data?.data ?? []} onCreated={list.reload} />
      <Loading loading={list.loading} />
      <Alert error={list.error ?? action.error} />
      <Table label="Broker channels">
        <thead><tr><th>Name</th><th>Type</th><th>Active</th><th>Ads</th><th>Playback</th><th>Actions</th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((c) => (
            <tr key={c.guid} data-broker-channel={c.guid}>
              <td><a href={href(`/broker/channels/${encodeURIComponent(c.guid)}`)}>{c.name}</a><div class="muted small-text">{c.description}</div></td>
              <td>{c.type}</td>
              <td>{c.active ? 'yes' : 'no'}</td>
              <td>{c.hasAds ? 'yes' : 'no'}</td>
              <td><CopyButton text={c.playbackUrl} label={`playback-${c.guid}`} /></td>
              <td class="row">
                <button type="button" class="small" disabled={action.busy} onClick={() => toggle(c)} aria-label={`${c.active ? 'Deactivate' : 'Activate'} ${c.name}`}>{c.active ? 'Deactivate' : 'Activate'}</button>
                <button type="button" class="small danger" disabled={action.busy} onClick={() => remove(c)} aria-label={`Delete ${c.name}`}>Delete</button>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
      {list.data && list.data.data.length === 0 ? <p class="muted">No broker channel yet.</p> : null}
    </Page>
  );
}
