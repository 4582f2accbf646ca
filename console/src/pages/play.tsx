// A bare player for any HLS URL (the test-playback link of an ad-insertion configuration).
import { Page } from '../components/ui';
import { Player } from '../components/player';
import { CopyButton } from '../components/ui';

export function PlayPage(props: { src: string }) {
  return (
    <Page title="Test playback">
      {props.src ? (
        <>
          <p><CopyButton text={props.src} label="play-url" /></p>
          <Player src={props.src} label="Test player" />
        </>
      ) : <p class="muted">No URL given.</p>}
    </Page>
  );
}
