// The edit form of one ad-insertion configuration (issue 31): every field with its current value, grouped as an
// operator thinks of them, saved with a PUT of what changed. The API judges the values: its 400 names each bad field,
// shown under that field.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type FieldProblem } from '../../api';
import { Alert, Field } from '../../components/ui';
import { useAction } from '../../hooks';
import type { Adinsert } from '../../types';
import { changedFields, draftOf, FILL_POLICIES, INSERTION_MODES, problemsByInput, SUPPRESSION_MODES, updateBody, type Draft } from './adinsert-draft';

type TextKey = { [K in keyof Draft]: Draft[K] extends string ? K : never }[keyof Draft];

export function AdinsertForm(props: { adinsert: Adinsert; onSaved: () => void }) {
  const before = draftOf(props.adinsert);
  const [draft, setDraft] = useState(before);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  // A reload (after a save, or another operator's) shows the stored values.
  useEffect(() => setDraft(draftOf(props.adinsert)), [props.adinsert]);

  const errors = problemsByInput(problems);
  const edit = (next: Partial<Draft>) => {
    setDraft({ ...draft, ...next });
    setSaved(false);
  };
  const input = (k: TextKey) => ({
    name: k,
    value: draft[k],
    onInput: (e: { currentTarget: { value: string } }) => edit({ [k]: e.currentTarget.value }),
  });
  const check = (k: 'insertion_mode_override' | 'ad_marker_passthrough') => ({
    name: k,
    checked: draft[k],
    onChange: (e: { currentTarget: { checked: boolean } }) => edit({ [k]: e.currentTarget.checked }),
  });
  const unchanged = changedFields(before, draft).length === 0;
  const submit = (e: Event) => {
    e.preventDefault();
    setProblems([]);
    void action.run(async () => {
      try {
        await api('PUT', `/broker/adinserts/${encodeURIComponent(props.adinsert.guid)}`, updateBody(before, draft));
      } catch (error) {
        if (error instanceof ApiError) setProblems(error.fields);
        throw error;
      }
      setSaved(true);
      props.onSaved();
    });
  };

  return (
    <form class="card form-grid" onSubmit={submit} noValidate aria-label="Edit configuration">
      <h2>Configuration</h2>
      <fieldset class="group">
        <legend>Playback</legend>
        <Field label="Name" error={errors.name}><input {...input('name')} /></Field>
        <Field label="Type" error={errors.type}>
          <select name="type" value={draft.type} onChange={(e) => edit({ type: e.currentTarget.value as Draft['type'] })}>
            <option value="live">live (live service)</option>
            <option value="broker">broker (broker service)</option>
          </select>
        </Field>
        <Field label="Origin (source_url)" error={errors.source_url}><input type="url" {...input('source_url')} /></Field>
        <Field label="Insertion mode" hint="stitched: ads in the playlist; guided: HLS Interstitials" error={errors.insertion_mode}>
          <select name="insertion_mode" value={draft.insertion_mode} onChange={(e) => edit({ insertion_mode: e.currentTarget.value as Draft['insertion_mode'] })}>
            {INSERTION_MODES.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </Field>
        <label class="check"><input type="checkbox" {...check('insertion_mode_override')} /> A session may choose the other mode (ads.mode=)</label>
        <Field label="Slate image (slate_ad)" hint="empty: none" error={errors.slate_ad}><input type="url" {...input('slate_ad')} /></Field>
      </fieldset>
      <fieldset class="group">
        <legend>Ad server</legend>
        <Field label="Ad server (VAST or VMAP URL)" hint="[session.id], [avail.duration], [cachebuster] … are filled in" error={errors.ad_server}>
          <input {...input('ad_server')} />
        </Field>
        <Field label="Ad server max requests per second" hint="per proxy process; empty: no cap" error={errors.ad_server_max_rps}>
          <input inputMode="numeric" {...input('ad_server_max_rps')} />
        </Field>
        <Field label="Live pre-roll ad server" hint="asked once when a live session starts; empty: no pre-roll" error={errors.live_preroll_ad_server}>
          <input {...input('live_preroll_ad_server')} />
        </Field>
        <Field label="Live pre-roll max seconds" hint="1 to 600" error={errors.live_preroll_max_seconds}>
          <input inputMode="numeric" {...input('live_preroll_max_seconds')} />
        </Field>
      </fieldset>
      <fieldset class="group">
        <legend>Policies</legend>
        <Field label="Personalization threshold (seconds)" hint="unfilled seconds a break may have before it stays content; empty: none" error={errors.personalization_threshold_seconds}>
          <input inputMode="decimal" {...input('personalization_threshold_seconds')} />
        </Field>
        <Field label="Avail suppression" error={errors.suppression_mode}>
          <select name="suppression_mode" value={draft.suppression_mode} onChange={(e) => edit({ suppression_mode: e.currentTarget.value as Draft['suppression_mode'] })}>
            <option value="">not set</option>
            {SUPPRESSION_MODES.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </Field>
        <Field label="Suppression distance (HH:MM:SS)" hint="from the live edge" error={errors.suppression_value}>
          <input disabled={draft.suppression_mode === ''} {...input('suppression_value')} />
        </Field>
        <Field label="Suppression fill policy" error={errors.suppression_fill_policy}>
          <select name="suppression_fill_policy" disabled={draft.suppression_mode === ''} value={draft.suppression_fill_policy}
            onChange={(e) => edit({ suppression_fill_policy: e.currentTarget.value as Draft['suppression_fill_policy'] })}>
            {FILL_POLICIES.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </Field>
        <Field label="Bumper before the ads (URL)" error={errors.bumper_start_url}><input type="url" {...input('bumper_start_url')} /></Field>
        <Field label="Bumper after the ads (URL)" error={errors.bumper_end_url}><input type="url" {...input('bumper_end_url')} /></Field>
        <label class="check"><input type="checkbox" {...check('ad_marker_passthrough')} /> Pass the origin's ad markers through</label>
      </fieldset>
      <fieldset class="group">
        <legend>CDN</legend>
        <Field label="Content segment prefix" hint="empty: segments stay on the origin" error={errors.content_segment_prefix}>
          <input type="url" {...input('content_segment_prefix')} />
        </Field>
        <Field label="Ad segment prefix" hint="empty: ad segments from this engine" error={errors.ad_segment_prefix}>
          <input type="url" {...input('ad_segment_prefix')} />
        </Field>
      </fieldset>
      <Alert error={action.error} />
      <div class="row">
        <button type="submit" class="primary" disabled={action.busy || unchanged}>Save</button>
        <button type="button" disabled={action.busy || unchanged} onClick={() => { setDraft(before); setProblems([]); action.clear(); }}>Undo changes</button>
        <span class="muted" role="status">{saved && unchanged ? 'Saved' : ''}</span>
      </div>
    </form>
  );
}
