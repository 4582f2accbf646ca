// One VOD: status and live encode progress (GET …/info), the player with renditions and captions, the formats record
// (GET /broker/vod/list/{guid}, spec 2.12), and the re-encode and captions actions (spec 4.7).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Player } from '../../components/player';
import { Alert, CopyButton, Loading, Page, Progress, Status, Table } from '../../components/ui';
import { useAction, useLoad } from '../../hooks';
import { href } from '../../router';
import type { Envelope, VodInfo } from '../../types';
import { duration } from './library';

interface Formats {
  hasHls: boolean;
  hls: { cdnUrl: string; variants: Array<{ mediaType: string; width: number; height: number; bitRate: string; cdnUrl: string }> };
  hasDash: boolean;
  dash: { cdnUrl: string; variants: Array<{ mediaType: string; width: number; height: number; bitRate: number; cdnUrl: string }> };
  hasMp4: boolean;
  mp4: Array<{ mediaType: string; width: number; height: number; bitRate: number | string; size: number; cdnUrl: string }>;
  hasThumbs: boolean;
}

const MOVING = new Set(['created', 'uploaded', 'queued', 'encoding']);

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
/** The last part of a URL's path: what a link to one file says. */
const fileName = (url: string) => decodeURIComponent(new URL(url, location.href).pathname.split('/').pop() || url);

/** The source's file name, with the size the packager recorded for an archive (which has no formats record until encoded). */
function sourceFile(v: VodInfo): string {
  const custom = v.meta?.custom_data;
  const size = custom && typeof custom === 'object' ? (custom as Record<string, unknown>).sizeBytes : undefined;
  return `${v.originalFileName ?? '—'}${typeof size === 'number' ? ` (${megabytes(size)})` : ''}`;
}

/**
 * The player's source changes only when the media does: a re-encode writes a new folder (a new URL), captions rewrite
 * the master in place, so their state goes in a query (past the 5 s manifest cache). Any other update leaves the
 * player alone, playing.
 */
function playerSrc(v: VodInfo): string {
  const url = v.hlsUrl ?? '';
  return v.captions?.status === 'complete' ? `${url}?captions=${encodeURIComponent(v.captions.vttUrl ?? '')}-${v.captions.cues ?? 0}` : url;
}

function FormatsRecord(props: { guid: string; updatedAt: string }) {
  const formats = useLoad(() => api<Envelope<Formats>>('GET', `/broker/vod/list/${encodeURIComponent(props.guid)}`), [props.guid, props.updatedAt]);
  const f = formats.data?.data;
  return (
    <section aria-labelledby="formats-title">
      <h2 id="formats-title">Formats</h2>
      <Alert error={formats.error} />
      {f ? (
        <>
          <p>HLS {f.hasHls ? '✓' : '—'} · DASH {f.hasDash ? '✓' : '—'} · MP4 {f.hasMp4 ? '✓' : '—'} · thumbnails {f.hasThumbs ? '✓' : '—'}</p>
          <Table label="Formats record">
            <thead><tr><th>Media type</th><th>Resolution</th><th>Bit rate</th><th>File size</th><th>Link</th></tr></thead>
            <tbody>
              {f.hasHls ? <tr><td>hls_master</td><td>—</td><td>—</td><td>—</td><td><a href={f.hls.cdnUrl}>master.m3u8</a></td></tr> : null}
              {f.hls.variants.map((v) => <tr key={v.mediaType}><td>{v.mediaType}</td><td>{v.width}×{v.height}</td><td>{v.bitRate}</td><td>—</td><td><a href={v.cdnUrl}>{fileName(v.cdnUrl)}</a></td></tr>)}
              {f.hasDash ? <tr><td>dash_manifest</td><td>—</td><td>—</td><td>—</td><td><a href={f.dash.cdnUrl}>manifest.mpd</a></td></tr> : null}
              {f.dash.variants.map((v) => <tr key={v.mediaType}><td>{v.mediaType}</td><td>{v.width}×{v.height}</td><td>{v.bitRate}</td><td>—</td><td>—</td></tr>)}
              {f.mp4.map((m) => <tr key={m.mediaType}><td>{m.mediaType}</td><td>{m.width}×{m.height}</td><td>{m.bitRate}</td><td>{megabytes(m.size)}</td><td><a href={m.cdnUrl}>{fileName(m.cdnUrl)}</a></td></tr>)}
            </tbody>
          </Table>
        </>
      ) : null}
    </section>
  );
}

export function VodDetailPage(props: { guid: string }) {
  const id = encodeURIComponent(props.guid);
  const [poll, setPoll] = useState(2000);
  const info = useLoad(async () => {
    const answer = await api<Envelope<VodInfo>>('GET', `/broker/vod/list/${id}/info`);
    const captionsMoving = answer.data.captions?.status === 'queued' || answer.data.captions?.status === 'running';
    setPoll(MOVING.has(answer.data.status) || captionsMoving ? 1000 : 10_000);
    return answer.data;
  }, [id], poll);
  const action = useAction();
  const v = info.data;
  const post = (path: string) => void action.run(async () => { await api('POST', path); info.reload(); });
  return (
    <Page title={v?.title ?? 'Video'}>
      <p><a href={href('/vod')}>← Library</a></p>
      <Loading loading={info.loading} />
      <Alert error={info.error ?? action.error} />
      {v ? (
        <>
          <dl class="facts" aria-label="Video status">
            <dt>Status</dt><dd><Status value={v.status} /></dd>
            {v.statusReason ? <><dt>Reason</dt><dd>{v.statusReason}</dd></> : null}
            {v.progress && v.status === 'encoding' ? (
              <>
                <dt>Encode</dt>
                <dd data-testid="encode-progress">
                  <Progress value={v.progress.percent} label="Encode progress" /> {v.progress.stage ?? ''}
                  {v.progress.speedX ? ` · ${v.progress.speedX}×` : ''}{v.progress.etaSec !== undefined ? ` · ${Math.round(v.progress.etaSec)} s left` : ''}
                </dd>
              </>
            ) : null}
            <dt>Duration</dt><dd>{duration(v.duration)}</dd>
            <dt>File</dt><dd>{sourceFile(v)}</dd>
            <dt>Captions</dt><dd data-testid="captions-state">{v.captions ? `${v.captions.status}${v.captions.cues !== undefined ? ` (${v.captions.cues} cues)` : ''}${v.captions.reason ? `: ${v.captions.reason}` : ''}` : 'none'}</dd>
          </dl>
          <div class="row">
            <button type="button" disabled={action.busy || MOVING.has(v.status)} onClick={() => post(`/broker/vod/encode/${id}`)}>{v.status === 'Encode-later' ? 'Encode' : 'Re-encode'}</button>
            <button type="button" disabled={action.busy || v.status !== 'complete'} onClick={() => post(`/broker/vod/encode/audio/${id}`)}>Generate captions</button>
          </div>
          {v.status === 'complete' && v.hlsUrl ? (
            <section aria-labelledby="player-title">
              <h2 id="player-title">Player</h2>
              <Player src={playerSrc(v)} label="VOD player" />
              <p>HLS <CopyButton text={v.hlsUrl} label="hls-url" /></p>
              {v.dashUrl ? <p>DASH <CopyButton text={v.dashUrl} label="dash-url" /></p> : null}
            </section>
          ) : null}
          {v.status === 'complete' ? <FormatsRecord guid={v.guid} updatedAt={v.updatedAt} /> : null}
        </>
      ) : null}
    </Page>
  );
}
