// Custom metadata groups (spec 2.14) of the signed-in organization: list, create with a field editor, delete.
import { useState } from 'preact/hooks';
import { api } from '../api';
import { Alert, Field, Loading, Page, Table } from '../components/ui';
import { useAction, useLoad } from '../hooks';
import { getSession } from '../session';
import type { Envelope, MetaGroup, MetaGroupField } from '../types';

const TYPES: MetaGroupField['type'][] = ['string', 'number', 'enum', 'boolean', 'json'];

interface DraftField {
  name: string;
  type: MetaGroupField['type'];
  required: boolean;
  options: string;
}

const blank = (): DraftField => ({ name: '', type: 'string', required: false, options: '' });

export function MetaGroupsPage() {
  const orgPath = `/organizations/${encodeURIComponent(getSession()?.organization ?? '')}`;
  const attachments = useLoad(() => api<Envelope<Array<{ guid: string; name: string }>>>('GET', `${orgPath}/meta-group-attachments`), [orgPath]);
  const list = useLoad(() => api<Envelope<MetaGroup[]>>('GET', `${orgPath}/meta-groups`), [orgPath]);
  const [name, setName] = useState('');
  const [attachment, setAttachment] = useState('');
  const [fields, setFields] = useState<DraftField[]>([blank()]);
  const action = useAction();
  const attachmentName = (guid: string) => attachments.data?.data.find((a) => a.guid === guid)?.name ?? guid;
  const setField = (i: number, change: Partial<DraftField>) => setFields((fs) => fs.map((f, j) => (j === i ? { ...f, ...change } : f)));
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = {
        name: name.trim(),
        attachment: attachment || attachments.data?.data[0]?.guid,
        fields: fields.filter((f) => f.name.trim()).map((f) => ({
          name: f.name.trim(),
          type: f.type,
          required: f.required,
          ...(f.type === 'enum' ? { additionalData: { enumOptions: f.options.split(',').map((o) => o.trim()).filter(Boolean) } } : {}),
        })),
      };
      await api('POST', `${orgPath}/meta-groups`, body);
      setName('');
      setFields([blank()]);
      list.reload();
    });
  };
  const remove = (g: MetaGroup) => {
    if (!confirm(`Delete the meta group ${g.name}?`)) return;
    void action.run(async () => { await api('DELETE', `${orgPath}/meta-groups/${encodeURIComponent(g.guid)}`); list.reload(); });
  };
  return (
    <Page title="Meta groups">
      <form class="card form-grid" onSubmit={create} aria-label="New meta group">
        <h2>New meta group</h2>
        <Field label="Name"><input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
        <Field label="Attached to">
          <select name="attachment" value={attachment} onChange={(e) => setAttachment(e.currentTarget.value)}>
            {(attachments.data?.data ?? []).map((a) => <option key={a.guid} value={a.guid}>{a.name}</option>)}
          </select>
        </Field>
        <fieldset class="fields-editor">
          <legend>Fields</legend>
          {fields.map((f, i) => (
            <div key={i} class="row">
              <input aria-label={`Field ${i + 1} name`} placeholder="name" value={f.name} onInput={(e) => setField(i, { name: e.currentTarget.value })} />
              <select aria-label={`Field ${i + 1} type`} value={f.type} onChange={(e) => setField(i, { type: e.currentTarget.value as MetaGroupField['type'] })}>
                {TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
              </select>
              {f.type === 'enum' ? <input aria-label={`Field ${i + 1} options`} placeholder="options, comma separated" value={f.options} onInput={(e) => setField(i, { options: e.currentTarget.value })} /> : null}
              <label class="check"><input type="checkbox" checked={f.required} onChange={(e) => setField(i, { required: e.currentTarget.checked })} /> required</label>
              <button type="button" class="small" onClick={() => setFields((fs) => fs.filter((_, j) => j !== i))} aria-label={`Remove field ${i + 1}`}>Remove</button>
            </div>
          ))}
          <button type="button" class="small" onClick={() => setFields((fs) => [...fs, blank()])}>Add field</button>
        </fieldset>
        <Alert error={action.error} />
        <div class="row"><button type="submit" class="primary" disabled={action.busy}>Create meta group</button></div>
      </form>
      <Loading loading={list.loading} />
      <Alert error={list.error ?? attachments.error} />
      <Table label="Meta groups">
        <thead><tr><th>Name</th><th>Attached to</th><th>Fields</th><th></th></tr></thead>
        <tbody>
          {(list.data?.data ?? []).map((g) => (
            <tr key={g.guid} data-meta-group={g.guid}>
              <td>{g.name}</td>
              <td>{attachmentName(g.attachment)}</td>
              <td>{g.fields.map((f) => `${f.name} (${f.type}${f.required ? ', required' : ''})`).join(', ') || '—'}</td>
              <td><button type="button" class="small danger" onClick={() => remove(g)} aria-label={`Delete ${g.name}`}>Delete</button></td>
            </tr>
          ))}
        </tbody>
      </Table>
    </Page>
  );
}
