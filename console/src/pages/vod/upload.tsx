// Drag-and-drop resumable upload (tus 1.0, the engine's /broker/upload): metadata first (POST /broker/vod/meta), then
// the file with the metadata guid as `x-engine-meta-metaguid` (spec 4.7). A file dropped again after a failure or a
// reload resumes where it stopped: tus-js-client keeps each upload's URL under the file's fingerprint.
import { useRef, useState } from 'preact/hooks';
import { api, freshIdToken } from '../../api';
import { Alert, Progress } from '../../components/ui';
import { describe } from '../../hooks';
import type { Envelope, UploadSettings } from '../../types';

interface Job {
  name: string;
  percent: number;
  state: 'uploading' | 'done' | 'failed';
  guid?: string;
  error?: string;
  /** continued an upload a reload or a failure cut off */
  resumed?: boolean;
}

const METAGUID = 'x-engine-meta-metaguid';
const CHUNK = 8 * 1024 * 1024;

export function UploadZone(props: { onUploaded: (guid: string) => void }) {
  const [jobs, setJobs] = useState<Job[]>([]);
  const [over, setOver] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);

  const update = (name: string, change: Partial<Job>) =>
    setJobs((list) => list.map((j) => (j.name === name ? { ...j, ...change } : j)));

  const send = async (file: File) => {
    setJobs((list) => [...list.filter((j) => j.name !== file.name), { name: file.name, percent: 0, state: 'uploading' }]);
    try {
      // tus-js-client is loaded with the first upload (its own chunk).
      const [{ Upload }, settings] = await Promise.all([import('tus-js-client'), api<Envelope<UploadSettings>>('GET', '/broker/upload-multipart')]);
      const upload = new Upload(file, {
        endpoint: settings.data.identityPoolId,
        chunkSize: CHUNK,
        retryDelays: [0, 1000, 3000, 5000],
        storeFingerprintForResuming: true,
        removeFingerprintOnSuccess: true,
        metadata: { filename: file.name, filetype: file.type || 'application/octet-stream' },
        onBeforeRequest: async (req) => {
          const token = await freshIdToken();
          if (token) req.setHeader('Authorization', token);
        },
        onProgress: (sent, total) => update(file.name, { percent: total ? (sent / total) * 100 : 0 }),
        onError: (e) => update(file.name, { state: 'failed', error: describe(e) }),
        onSuccess: () => {
          update(file.name, { state: 'done', percent: 100 });
          const guid = upload.options.metadata?.[METAGUID];
          if (guid) props.onUploaded(guid);
        },
      });
      const previous = await upload.findPreviousUploads();
      const resumable = previous.find((p) => p.metadata[METAGUID]);
      if (resumable) {
        upload.resumeFromPreviousUpload(resumable);
        upload.options.metadata = { ...upload.options.metadata, [METAGUID]: resumable.metadata[METAGUID] ?? '' };
        update(file.name, { guid: resumable.metadata[METAGUID], resumed: true });
      } else {
        const title = file.name.replace(/\.[^.]+$/, '') || file.name;
        const meta = await api<{ data: { guid?: string }; guid?: string }>('POST', '/broker/vod/meta', { title, type: 'source', originalFileName: file.name });
        const guid = meta.guid ?? meta.data.guid;
        if (!guid) throw new Error('the engine answered without a metadata guid');
        upload.options.metadata = { ...upload.options.metadata, [METAGUID]: guid };
        update(file.name, { guid });
      }
      upload.start();
    } catch (e) {
      update(file.name, { state: 'failed', error: describe(e) });
    }
  };

  const take = (files: FileList | null | undefined) => {
    setError(null);
    const list = Array.from(files ?? []);
    if (list.length === 0) return;
    const notMedia = list.filter((f) => f.type && !f.type.startsWith('video/') && !f.type.startsWith('audio/'));
    if (notMedia.length) setError(`Not a video or audio file: ${notMedia.map((f) => f.name).join(', ')} (uploaded anyway; the encoder decides)`);
    for (const file of list) void send(file);
  };

  return (
    <section aria-labelledby="upload-title" class="card">
      <h2 id="upload-title">Upload</h2>
      <div
        class={`dropzone${over ? ' over' : ''}`}
        data-testid="dropzone"
        onDragOver={(e) => { e.preventDefault(); setOver(true); }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => { e.preventDefault(); setOver(false); take(e.dataTransfer?.files); }}
      >
        <p>Drop video files here, or</p>
        <label class="button">
          Choose files
          <input ref={input} class="file-input" type="file" accept="video/*,audio/*,.mp4,.mov,.mkv,.ts,.mxf" multiple onChange={(e) => { take(e.currentTarget.files); e.currentTarget.value = ''; }} />
        </label>
      </div>
      <Alert error={error} />
      <ul class="plain uploads" aria-label="Uploads">
        {jobs.map((j) => (
          <li key={j.name} data-upload={j.name} data-state={j.state}>
            <span>{j.name}</span> <Progress value={j.percent} label={`Upload of ${j.name}`} />
            {j.resumed ? <span class="muted small-text"> resumed</span> : null}
            {j.state === 'done' ? <span class="small-text"> uploaded</span> : null}
            {j.error ? <span class="alert small-text" role="alert">{j.error}</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
