import { encodeVod } from '/work/main/vod-encoder/encode.js';
import { buildRecords } from '/work/main/vod-encoder/records.js';
const r = await encodeVod('/tmp/m/clip480.mp4', { outDir: '/tmp/m/out1', preset: 'ultrafast' }).done;
if (!r.ok) throw new Error(JSON.stringify(r));
const rec = await buildRecords({ outDir: '/tmp/m/out1', sourceGuid: 'abc', cdnBase: 'http://h/media/vod/abc', destBucket: 'media' });
if (!rec.ok) throw new Error(JSON.stringify(rec));
const v = rec.value;
console.log(JSON.stringify({ formats: v.formats, m: Object.values(v.hlsManifests)[0], hs: v.hlsSegments.slice(0, 1), ds: Object.values(v.dashSegments)[0]?.slice(0, 1), thumbs: v.thumbs, d: v.durationSec }, null, 1));
