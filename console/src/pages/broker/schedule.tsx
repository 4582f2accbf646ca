// One broker channel and its schedule (spec 2.9, 4.4): the listings of a window as a timeline, and an editor for the
// chain of listings. Saving sends one contiguous batch (POST /broker/listings/multiple: the first listing starts at
// the batch start, each starts where the previous ends, the last ends at the batch end), which the engine applies
// atomically; what the old chain covered beyond the new one is then cleared (DELETE /broker/listings).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, query } from '../../api';
import { Player } from '../../components/player';
import { Timeline } from '../../components/timeline';
import { Alert, CopyButton, Field, Loading, Page } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import { href } from '../../router';
import type { BrokerChannel, Envelope, Listing, Playlist, VodInfo } from '../../types';

interface Row {
  key: number;
  title: string;
  minutes: number;
  /** "playlist:<guid>", "vod:<guid>" or "" */
  content: string;
  color: string;
}

const SPANS = [{ label: '1 day', sec: 86_400 }, { label: '2 days', sec: 2 * 86_400 }, { label: '7 days', sec: 7 * 86_400 }];
let nextKey = 1;

/** A datetime-local value (local time, minutes) from Unix seconds, and back. */
const toLocal = (sec: number): string => {
  const d = new Date(sec * 1000);
  d.setMinutes(d.getMinutes() - d.getTimezoneOffset());
  return d.toISOString().slice(0, 16);
};
const fromLocal = (value: string): number => Math.floor(new Date(value).getTime() / 1000);
const midnight = (): number => { const d = new Date(); d.setHours(0, 0, 0, 0); return Math.floor(d.getTime() / 1000); };

function rowsOf(listings: Listing[]): Row[] {
  return listings.map((l) => ({
    key: nextKey++,
    title: l.title,
    minutes: Math.round((l.end - l.start) / 60),
    content: l.playlist ? `playlist:${l.playlist}` : l.vod ? `vod:${l.vod}` : '',
    color: l.color ?? '',
  }));
}

export function SchedulePage(props: { guid: string }) {
  const id = encodeURIComponent(props.guid);
  const channel = useLoad(() => api<Envelope<BrokerChannel>>('GET', `/broker/channels/${id}`), [id]);
  const playlists = useLoad(() => api<Envelope<Playlist[]>>('GET', '/broker/playlists'), []);
  const vods = useLoad(() => api<Envelope<VodInfo[]>>('GET', '/broker/vod/list?status=complete'), []);
  const [from, setFrom] = useState(midnight);
  const [span, setSpan] = useState(2 * 86_400);
  const listings = useLoad(
    () => api<Envelope<Listing[]>>('GET', `/broker/listings${query({ channel: props.guid, start: from, end: from + span })}`),
    [id, from, span],
  );
  const loaded = listings.data?.data ?? [];
  const [rows, loadRows] = useState<Row[]>([]);
  const [chainStart, loadChainStart] = useState(0);
  /**
   * Edits since the editor last took the stored chain: a reload landing after them (the one a save starts, answered
   * while the user already edits again) leaves them in place instead of putting the stored chain back over them.
   */
  const edited = useRef(false);
  const setRows: typeof loadRows = (next) => { edited.current = true; loadRows(next); };
  const setChainStart: typeof loadChainStart = (next) => { edited.current = true; loadChainStart(next); };
  const [preview, setPreview] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const action = useAction();

  // The editor starts from what is stored in the window (or an empty chain at the next full hour).
  useEffect(() => {
    if (!listings.data || edited.current) return;
    loadRows(rowsOf(loaded));
    loadChainStart(loaded[0]?.start ?? Math.ceil(Date.now() / 3_600_000) * 3600);
  }, [listings.data]);

  const gaps = loaded.some((l, i) => i > 0 && l.start !== loaded[i - 1]!.end);
  const planned = useMemo(() => {
    let at = chainStart;
    return rows.map((r) => {
      const start = at;
      at += Math.max(1, Math.round(r.minutes)) * 60;
      return { row: r, start, end: at };
    });
  }, [rows, chainStart]);

  const setRow = (key: number, change: Partial<Row>) => setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...change } : r)));
  const move = (index: number, by: number) => setRows((rs) => {
    const next = [...rs];
    const [row] = next.splice(index, 1);
    if (row) next.splice(Math.max(0, Math.min(next.length, index + by)), 0, row);
    return next;
  });
  const save = (e: Event) => {
    e.preventDefault();
    setSaved(null);
    void action.run(async () => {
      if (planned.length === 0) throw new Error('add at least one listing');
      const start = planned[0]!.start;
      const end = planned.at(-1)!.end;
      await api('POST', '/broker/listings/multiple', {
        channel: props.guid,
        start,
        end,
        listings: planned.map(({ row, start: s, end: e2 }) => {
          const [kind, guid] = row.content.split(':');
          return {
            channel: props.guid, start: s, end: e2, title: row.title.trim(),
            ...(row.color ? { color: row.color } : {}),
            ...(kind === 'playlist' && guid ? { playlist: guid } : {}),
            ...(kind === 'vod' && guid ? { vod: guid } : {}),
          };
        }),
      });
      // The old chain's parts outside the new one: cleared so the schedule is what the editor shows.
      const oldStart = loaded[0]?.start;
      const oldEnd = loaded.at(-1)?.end;
      const clear = async (s: number, e2: number) => api('DELETE', `/broker/listings${query({ channel: props.guid, start: s, end: e2 })}`);
      if (oldEnd !== undefined && oldEnd > end) await clear(end, oldEnd);
      if (oldStart !== undefined && oldStart < start) await clear(oldStart, start);
      setSaved(`Saved ${planned.length} listing${planned.length === 1 ? '' : 's'}.`);
      // the stored chain is now what the editor shows: the reload may take it, unless the user edits before it lands
      edited.current = false;
      listings.reload();
    });
  };

  const c = channel.data?.data;
  return (
    <Page title={c ? `${c.name}: schedule` : 'Schedule'}>
      <p><a href={href('/broker/channels')}>← Broker channels</a></p>
      <Loading loading={channel.loading} />
      <Alert error={channel.error ?? listings.error ?? playlists.error ?? vods.error} />
      {c ? (
        <section aria-labelledby="playback-title">
          <h2 id="playback-title">Playback</h2>
          <p>{c.type} · {c.active ? 'active' : 'inactive'}{c.hasAds ? ' · with ads' : ''}</p>
          <p><CopyButton text={c.playbackUrl} label="broker-playback" /></p>
          {preview
            ? <Player src={c.playbackUrl} label="Channel preview" />
            : <button type="button" onClick={() => setPreview(true)}>Preview</button>}
        </section>
      ) : null}

      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Timeline window">
          <Field label="From"><input type="date" value={toLocal(from).slice(0, 10)} onInput={(e) => { const v = e.currentTarget.value; if (v) setFrom(fromLocal(`${v}T00:00`)); }} /></Field>
          <Field label="Span">
            <select value={span} onChange={(e) => setSpan(Number(e.currentTarget.value))}>
              {SPANS.map((s) => <option key={s.sec} value={s.sec}>{s.label}</option>)}
            </select>
          </Field>
        </form>
        <Timeline listings={loaded} from={from} to={from + span} now={Math.floor(Date.now() / 1000)} />
      </section>

      <form class="card" onSubmit={save} aria-label="Schedule editor">
        <h2>Edit the schedule</h2>
        {gaps ? <p class="muted">The stored listings have gaps; saving makes them one chain from the first start.</p> : null}
        <Field label="Chain starts at"><input type="datetime-local" required value={chainStart ? toLocal(chainStart) : ''} onInput={(e) => { const v = e.currentTarget.value; if (v) setChainStart(fromLocal(v)); }} /></Field>
        <ol class="schedule-rows">
          {planned.map(({ row, start, end }, i) => (
            <li key={row.key} class="row" data-row={i}>
              <span class="small-text schedule-time">{toLocal(start).slice(11)}–{toLocal(end).slice(11)}</span>
              <input aria-label={`Listing ${i + 1} title`} required placeholder="title" value={row.title} onInput={(e) => setRow(row.key, { title: e.currentTarget.value })} />
              <input aria-label={`Listing ${i + 1} minutes`} type="number" min={1} required value={row.minutes} onInput={(e) => setRow(row.key, { minutes: Number(e.currentTarget.value) })} />
              <select aria-label={`Listing ${i + 1} plays`} value={row.content} onChange={(e) => setRow(row.key, { content: e.currentTarget.value })}>
                <option value="">nothing (title only)</option>
                <optgroup label="Playlists">
                  {(playlists.data?.data ?? []).map((p) => <option key={p.guid} value={`playlist:${p.guid}`}>{p.name}</option>)}
                </optgroup>
                <optgroup label="Videos">
                  {(vods.data?.data ?? []).map((v) => <option key={v.guid} value={`vod:${v.guid}`}>{v.title ?? v.originalFileName ?? v.guid}</option>)}
                </optgroup>
              </select>
              <input aria-label={`Listing ${i + 1} colour`} type="color" value={row.color || '#1f6feb'} onInput={(e) => setRow(row.key, { color: e.currentTarget.value })} />
              <button type="button" class="small" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move listing ${i + 1} up`}>↑</button>
              <button type="button" class="small" disabled={i === planned.length - 1} onClick={() => move(i, 1)} aria-label={`Move listing ${i + 1} down`}>↓</button>
              <button type="button" class="small danger" onClick={() => setRows((rs) => rs.filter((r) => r.key !== row.key))} aria-label={`Remove listing ${i + 1}`}>Remove</button>
            </li>
          ))}
        </ol>
        <div class="row">
          <button type="button" onClick={() => setRows((rs) => [...rs, { key: nextKey++, title: '', minutes: 30, content: '', color: '' }])}>Add listing</button>
          <button type="submit" class="primary" disabled={action.busy}>Save schedule</button>
          {saved ? <span role="status">{saved}</span> : null}
        </div>
        <Alert error={action.error} />
      </form>
    </Page>
  );
}
