import { encodeVod } from '/work/main/vod-encoder/encode.js';
const h = encodeVod('/tmp/m/clip480.mp4', { outDir: '/tmp/m/out1', preset: 'ultrafast', onProgress: (p) => console.log(JSON.stringify(p)) });
const r = await h.done;
console.log(JSON.stringify(r, null, 1));
