// An HLS player on hls.js (Chromium has no native HLS) with a rendition and a captions choice. The worker stays off:
// the console's CSP (script-src 'self') refuses the blob: worker hls.js would otherwise start. hls.js is loaded on
// first use (its own chunk), so the pages without a player do not download it.
import type Hls from 'hls.js';
import type { Level } from 'hls.js';
import { useEffect, useRef, useState } from 'preact/hooks';

interface Track {
  id: number;
  name: string;
}

export function Player(props: { src: string; label: string }) {
  const video = useRef<HTMLVideoElement>(null);
  const hlsRef = useRef<Hls | null>(null);
  const [levels, setLevels] = useState<Level[]>([]);
  const [level, setLevel] = useState(-1);
  const [tracks, setTracks] = useState<Track[]>([]);
  const [track, setTrack] = useState(-1);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const media = video.current;
    if (!media) return;
    setError(null);
    setLevels([]);
    setTracks([]);
    let hls: Hls | null = null;
    let alive = true;
    void import('hls.js').then(({ default: HlsClass }) => {
      if (!alive) return;
      if (!HlsClass.isSupported()) {
        media.src = props.src; // Safari plays HLS natively
        return;
      }
      hls = new HlsClass({ enableWorker: false });
      hlsRef.current = hls;
      hls.on(HlsClass.Events.MANIFEST_PARSED, (_e, data) => setLevels(data.levels));
      hls.on(HlsClass.Events.SUBTITLE_TRACKS_UPDATED, (_e, data) =>
        setTracks(data.subtitleTracks.map((t) => ({ id: t.id, name: t.name || t.lang || `track ${t.id}` }))));
      // A channel just started, or a busy engine, can fail a first load: recover as hls.js advises (reload on a network
      // error, recoverMediaError on a media error) a few times before showing the failure.
      let recoveries = 0;
      hls.on(HlsClass.Events.ERROR, (_e, data) => {
        if (!data.fatal || !hls) return;
        const current = hls;
        if (recoveries < 5 && data.type === HlsClass.ErrorTypes.NETWORK_ERROR) {
          recoveries += 1;
          setError(`Retrying after ${data.details}…`);
          setTimeout(() => { if (alive) { current.loadSource(props.src); current.startLoad(); } }, 2000);
        } else if (recoveries < 5 && data.type === HlsClass.ErrorTypes.MEDIA_ERROR) {
          recoveries += 1;
          current.recoverMediaError();
        } else setError(`Playback failed: ${data.details}`);
      });
      hls.on(HlsClass.Events.FRAG_BUFFERED, () => setError(null));
      hls.loadSource(props.src);
      hls.attachMedia(media);
    }, (e: unknown) => setError(`The player could not load: ${e instanceof Error ? e.message : String(e)}`));
    return () => {
      alive = false;
      hls?.destroy();
      hlsRef.current = null;
    };
  }, [props.src]);

  const chooseLevel = (value: number) => {
    setLevel(value);
    if (hlsRef.current) hlsRef.current.currentLevel = value;
  };
  const chooseTrack = (value: number) => {
    setTrack(value);
    const hls = hlsRef.current;
    if (!hls) return;
    hls.subtitleTrack = value;
    hls.subtitleDisplay = value >= 0;
  };

  return (
    <div class="player">
      <video ref={video} controls muted playsInline aria-label={props.label} data-src={props.src} />
      <div class="player-controls">
        <label>
          Rendition{' '}
          <select value={level} onChange={(e) => chooseLevel(Number(e.currentTarget.value))} aria-label={`${props.label} rendition`}>
            <option value={-1}>Auto</option>
            {levels.map((l, i) => (
              <option key={i} value={i}>{l.height ? `${l.height}p` : `level ${i}`} · {Math.round(l.bitrate / 1000)} kb/s</option>
            ))}
          </select>
        </label>
        <label>
          Captions{' '}
          <select value={track} onChange={(e) => chooseTrack(Number(e.currentTarget.value))} aria-label={`${props.label} captions`}>
            <option value={-1}>Off</option>
            {tracks.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
          </select>
        </label>
      </div>
      {error ? <p class="alert" role="alert">{error}</p> : null}
    </div>
  );
}
