// One ad-insertion configuration (issue 31): its fields in an edit form, its test-playback link and the debug log of
// a session.
import { api } from '../../api';
import { Alert, CopyButton, Loading, Page } from '../../components/ui';
import { useLoad } from '../../hooks';
import { href } from '../../router';
import type { Adinsert, Envelope } from '../../types';
import { AdinsertForm } from './adinsert-form';
import { DebugLogBox } from './debug-log';
import { TestLink } from './list';

export function AdinsertPage(props: { guid: string }) {
  const id = encodeURIComponent(props.guid);
  const config = useLoad(() => api<Envelope<Adinsert>>('GET', `/broker/adinserts/${id}`), [id]);
  const a = config.data?.data;
  return (
    <Page title={a?.name ?? 'Ad insertion configuration'}>
      <p><a href={href('/ads')}>← Ad insertion</a></p>
      <Loading loading={config.loading} />
      <Alert error={config.error} />
      {a ? (
        <>
          <dl class="facts" aria-label="Playback links">
            <dt>Playback base</dt><dd><CopyButton text={a.masterEndpoint} label={`master-${a.guid}`} /></dd>
            <dt>Test</dt><dd><TestLink adinsert={a} /></dd>
          </dl>
          <AdinsertForm adinsert={a} onSaved={config.reload} />
          <DebugLogBox adinsert={a} />
        </>
      ) : null}
    </Page>
  );
}
