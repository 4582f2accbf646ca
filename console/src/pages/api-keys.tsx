// Broker API keys (spec 2.7, 4.1, 5.4): create (the value is read from the returned url), activate, deactivate,
// delete. Issuing needs an ID token with the admin role, which is what the console signs in with.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Alert, CopyButton, Field, Loading, Page, Table } from '../components/ui';
import { useAction, useLoad } from '../hooks';
import type { BrokerKey, Envelope } from '../types';

export function ApiKeysPage() {
  const list = useLoad(() => api<Envelope<BrokerKey[]>>('GET', '/broker/api-keys'), []);
  const [name, setName] = useState('');
  const [shown, setShown] = useState<Record<string, boolean>>({});
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const created = await api<{ guid: string }>('POST', '/broker/api-keys', { name: name.trim(), active: true });
      setName('');
      setShown((s) => ({ ...s, [created.guid]: true }));
      list.reload();
    });
  };
  const update = (k: BrokerKey, body: Record<string, unknown>) =>
    void action.run(async () => { await api('PUT', `/broker/api-keys/${encodeURIComponent(k.guid)}`, body); list.reload(); });
  const remove = (k: BrokerKey) => {
    if (!confirm(`Delete the key ${k.name}? Servers using it are refused at once.`)) return;
    void action.run(async () => { await api('DELETE', `/broker/api-keys/${encodeURIComponent(k.guid)}`); list.reload(); });
  };
  return (
    <Page title="API keys">
      <form class="card row" onSubmit={create} aria-label="New API key">
        <Field label="Name"><input name="name" required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
        <button type="submit" class="primary" disabled={action.busy}>Create key</button>
      </form>
      <Loading loading={list.loading} />
      <Alert error={list.error ?? action.error} />
      <Table label="API keys">
        <thead><tr><th>Name</th><th>Active</th><th>Key</th><th>Actions</th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((k) => (
            <tr key={k.guid} data-key={k.guid}>
              <td>{k.name}</td>
              <td>{k.active ? 'yes' : 'no'}</td>
              <td>
                {shown[k.guid]
                  ? <CopyButton text={k.value} label={`key-${k.guid}`} />
                  : <button type="button" class="small" onClick={() => setShown((s) => ({ ...s, [k.guid]: true }))} aria-label={`Show the key ${k.name}`}>Show</button>}
              </td>
              <td class="row">
                <button type="button" class="small" onClick={() => update(k, { active: !k.active })} aria-label={`${k.active ? 'Deactivate' : 'Activate'} ${k.name}`}>{k.active ? 'Deactivate' : 'Activate'}</button>
                <button type="button" class="small danger" onClick={() => remove(k)} aria-label={`Delete ${k.name}`}>Delete</button>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
      {list.data && list.data.data.length === 0 ? <p class="muted">No API key yet.</p> : null}
    </Page>
  );
}
