// The blueprint catalog (spec 4.2.1) and "create a workflow from this blueprint" (4.2.4: the complete blueprint is
// embedded, fetched from GET /blueprints/{id} just before the POST).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Alert, Field, Loading, Page } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import { navigate } from '../../router';
import type { BlueprintSummary, Region } from '../../types';

function CreateWorkflow(props: { blueprint: BlueprintSummary; regions: Region[]; onCancel: () => void }) {
  const [name, setName] = useState(props.blueprint.name.replace(/[^A-Za-z0-9 _-]/g, '').slice(0, 60) || 'channel');
  const [description, setDescription] = useState('');
  const [region, setRegion] = useState('');
  const [tags, setTags] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const blueprint = await api<Record<string, unknown>>('GET', `/blueprints/${encodeURIComponent(props.blueprint.id)}`);
      const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean);
      const created = await api<{ id: string }>('POST', '/workflows', {
        name: name.trim(),
        blueprint,
        ...(description.trim() ? { description: description.trim() } : {}),
        ...(region ? { region } : {}),
        ...(tagList.length ? { tags: tagList } : {}),
      });
      navigate(`/live/channels/${encodeURIComponent(created.id)}`);
    });
  };
  return (
    <form class="card form-grid" onSubmit={submit} aria-label={`New workflow from ${props.blueprint.name}`}>
      <h2>New workflow from “{props.blueprint.name}”</h2>
      <Field label="Name"><input name="name" required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} /></Field>
      <Field label="Description"><input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></Field>
      <Field label="Region">
        <select name="region" value={region} onChange={(e) => setRegion(e.currentTarget.value)}>
          <option value="">Default region</option>
          {props.regions.map((r) => <option key={r.name} value={r.name}>{r.description || r.name}</option>)}
        </select>
      </Field>
      <Field label="Tags" hint="comma separated"><input name="tags" value={tags} onInput={(e) => setTags(e.currentTarget.value)} /></Field>
      <Alert error={action.error} />
      <div class="row">
        <button type="submit" class="primary" disabled={action.busy}>Create workflow</button>
        <button type="button" onClick={props.onCancel}>Cancel</button>
      </div>
    </form>
  );
}

export function BlueprintsPage() {
  const list = useLoad(() => api<{ items: BlueprintSummary[] }>('GET', '/blueprints'), []);
  const regions = useLoad(() => api<{ items: Region[] }>('GET', '/regions'), []);
  const [chosen, setChosen] = useState<BlueprintSummary | null>(null);
  return (
    <Page title="Blueprints">
      <Loading loading={list.loading} />
      <Alert error={list.error} />
      {chosen ? <CreateWorkflow blueprint={chosen} regions={regions.data?.items ?? []} onCancel={() => setChosen(null)} /> : null}
      <ul class="cards">
        {(list.data?.items ?? []).map((b) => (
          <li key={b.id} class="card" data-blueprint={b.id}>
            <h2>{b.name} {b.featured ? <span class="badge">featured</span> : null}</h2>
            <p>{b.description}</p>
            <p class="tags">{b.tags.map((t) => <span key={t} class="tag">{t}</span>)}</p>
            <button type="button" class="primary" onClick={() => setChosen(b)} aria-label={`Create a workflow from ${b.name}`}>Create workflow</button>
          </li>
        ))}
      </ul>
    </Page>
  );
}
