// The VOD library (GET /broker/vod/list, spec 4.7) with its status filter, encode progress and the upload zone.
import { useState } from 'preact/hooks';
import { api, query } from '../../api';
import { Alert, Field, Loading, Page, Progress, Status, Table, when } from '../../components/ui';
import { useLoad } from '../../hooks';
import { href } from '../../router';
import type { Envelope, VodInfo } from '../../types';
import { UploadZone } from './upload';

export const VOD_STATUSES = ['created', 'uploaded', 'queued', 'encoding', 'complete', 'error', 'Encode-later', 'archive'];
const MOVING = new Set(['uploaded', 'queued', 'encoding']);

export function duration(sec: number | null): string {
  if (sec === null) return '—';
  const s = Math.round(sec);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function VodLibraryPage() {
  const [status, setStatus] = useState('');
  const [poll, setPoll] = useState(5000);
  const list = useLoad(async () => {
    const answer = await api<Envelope<VodInfo[]>>('GET', `/broker/vod/list${query({ status })}`);
    // Poll fast while something uploads or encodes, slowly otherwise.
    setPoll(answer.data.some((v) => MOVING.has(v.status)) ? 1500 : 5000);
    return answer.data;
  }, [status], poll);
  const items = [...(list.data ?? [])].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return (
    <Page title="Video on demand">
      <UploadZone onUploaded={() => list.reload()} />
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="VOD filters">
        <Field label="Status">
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">All</option>
            {VOD_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </Field>
      </form>
      <Loading loading={list.loading} />
      <Alert error={list.error} />
      <Table label="VOD library">
        <thead><tr><th>Title</th><th>Status</th><th>Progress</th><th>Duration</th><th>Resolution</th><th>Created</th></tr></thead>
        <tbody>
          {items.map((v) => (
            <tr key={v.guid} data-vod={v.guid} data-status={v.status}>
              <td><a href={href(`/vod/${encodeURIComponent(v.guid)}`)}>{v.title ?? v.originalFileName ?? v.guid}</a></td>
              <td><Status value={v.status} />{v.statusReason ? <div class="muted small-text">{v.statusReason}</div> : null}</td>
              <td>{v.status === 'encoding' && v.progress ? <Progress value={v.progress.percent} label={`Encode of ${v.title ?? v.guid}`} /> : '—'}</td>
              <td>{duration(v.duration)}</td>
              <td>{v.width && v.height ? `${v.width}×${v.height}` : '—'}</td>
              <td>{when(v.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </Table>
      {list.data && items.length === 0 ? <p class="muted">No video{status ? ` with status ${status}` : ''}.</p> : null}
    </Page>
  );
}
