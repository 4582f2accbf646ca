// A debug session's log (issue 31 item 8, docs/ssai-ad-ops.md "Debug log"): GET /v1/debug/{guid}/{session} as a
// table of what the proxy fetched, asked and decided for one viewer who started with `ads.debug=1`.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../../api';
import { Alert, Table } from '../../components/ui';
import { describe } from '../../hooks';
import type { Adinsert, DebugEntry, DebugLogAnswer } from '../../types';

/**
 * The session id from what the operator pasted: the id itself, a media playlist URL (/v1/manifest/{guid}/{session}/…)
 * or a URL with `sessionId=`.
 */
export function sessionIdOf(pasted: string): string {
  const value = pasted.trim();
  const manifest = /\/v1\/(?:manifest|segment|tracking)\/[^/]+\/([^/?#]+)/.exec(value);
  if (manifest?.[1]) return decodeURIComponent(manifest[1]);
  const query = /[?&]sessionId=([^&#]+)/.exec(value);
  return query?.[1] ? decodeURIComponent(query[1]) : value;
}

/** UTC wall-clock time with milliseconds: entries of one request are milliseconds apart. */
const time = (at: number) => new Date(at).toISOString().slice(11, 23);

function outcomeOf(e: DebugEntry): string {
  switch (e.kind) {
    case 'session': return `${e.mode} session`;
    case 'origin': return [String(e.status), e.code, e.error].filter(Boolean).join(' · ');
    case 'ad-request': return e.error ?? String(e.status ?? '—');
    case 'decision': return e.reason ? `${e.outcome}: ${e.reason}` : e.outcome;
    default: return '';
  }
}

function urlOf(e: DebugEntry): string {
  return e.kind === 'session' ? e.origin : e.kind === 'origin' || e.kind === 'ad-request' ? e.url : '';
}

/** The rest of an entry: timing and size, the break and its ads, the raw ad server answer behind a disclosure. */
function Details(props: { entry: DebugEntry }) {
  const e = props.entry;
  if (e.kind === 'session') {
    const params = Object.entries(e.playerParams ?? {}).map(([k, v]) => `${k}=${v}`).join(' ');
    return <>{params ? `player params: ${params}` : ''}</>;
  }
  if (e.kind === 'origin') return <>{`${e.ms} ms${e.bytes !== undefined ? ` · ${e.bytes} bytes` : ''}`}</>;
  if (e.kind === 'ad-request') {
    return (
      <>
        {`avail ${e.availId} · ${e.ms} ms${e.bytes !== undefined ? ` · ${e.bytes} bytes` : ''}`}
        {e.answer !== undefined ? (
          <details>
            <summary>Answer{e.truncated ? ' (cut at 64 KiB)' : ''}</summary>
            <pre class="raw">{e.answer}</pre>
          </details>
        ) : null}
      </>
    );
  }
  if (e.kind === 'decision') {
    const d = e.details ?? {};
    const ads = Array.isArray(d.ads) ? d.ads.map((a) => `${a.adId}${a.slate ? ' (slate)' : ''} ${a.duration} s`).join(', ') : '';
    const parts = [`avail ${e.availId}`, d.duration !== undefined ? `break ${d.duration} s` : '', ads ? `ads: ${ads}` : '',
      Array.isArray(d.skipped) && d.skipped.length ? `skipped: ${d.skipped.map((s) => `${s.adId} (${s.reason})`).join(', ')}` : '',
      d.error ? `error: ${d.error}` : ''];
    return <>{parts.filter(Boolean).join(' · ')}</>;
  }
  return null;
}

export function DebugLogBox(props: { adinsert: Adinsert }) {
  const [pasted, setPasted] = useState('');
  const [log, setLog] = useState<DebugLogAnswer | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const guid = props.adinsert.guid;

  const show = async (e: Event) => {
    e.preventDefault();
    const session = sessionIdOf(pasted);
    if (!session) return;
    setBusy(true);
    setError(null);
    setMissing(null);
    try {
      setLog(await api<DebugLogAnswer>('GET', `/v1/debug/${encodeURIComponent(guid)}/${encodeURIComponent(session)}`));
    } catch (failure) {
      setLog(null);
      if (failure instanceof ApiError && failure.code === 'DEBUG_LOG_NOT_FOUND') setMissing(session);
      else setError(describe(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="debug-title">
      <h2 id="debug-title">Debug log</h2>
      <p class="muted">
        Start a debug session by adding <code>ads.debug=1</code> to the playback URL, e.g.{' '}
        <code>{`${props.adinsert.masterEndpoint}live/master.m3u8?ads.debug=1`}</code>. Its session id is the part after the
        configuration in its media playlist URLs (<code>{`/v1/manifest/${guid}/{session}/0.m3u8`}</code>); paste the id or
        such a URL. A log is kept an hour after its last entry.
      </p>
      <form class="row debug-session" onSubmit={show} aria-label="Read a debug log">
        <input aria-label="Session id" name="session" placeholder="session id or media playlist URL" value={pasted} onInput={(e) => setPasted(e.currentTarget.value)} />
        <button type="submit" disabled={busy || !pasted.trim()}>Show log</button>
      </form>
      <Alert error={error} />
      {missing !== null ? (
        <p class="alert" role="status">
          No debug log for session <code>{missing}</code>: it was not started with <code>ads.debug=1</code>, its log
          expired, or it belongs to another configuration.
        </p>
      ) : null}
      {log ? (
        <Table label="Debug log entries">
          <thead><tr><th>Time (UTC)</th><th>Kind</th><th>Outcome / reason</th><th>URL</th><th>Details</th></tr></thead>
          <tbody>
            {log.entries.map((entry, i) => (
              <tr key={i} data-kind={entry.kind}>
                <td class="nowrap">{time(entry.at)}</td>
                <td class="nowrap">{entry.kind}</td>
                <td>{outcomeOf(entry)}</td>
                <td class="wrap">{urlOf(entry)}</td>
                <td class="wrap"><Details entry={entry} /></td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
    </section>
  );
}
