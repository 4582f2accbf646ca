import { encodeVod } from '/work/main/vod-encoder/encode.js';
const t0 = performance.now(); let last = '';
const r = await encodeVod('/work/main/test-media/bench-1080p-60s.mp4', { outDir: '/tmp/bt/out', preset: 'ultrafast', onProgress: (p) => { if (p.stage !== last) { console.log(p.stage, ((performance.now() - t0)/1000).toFixed(2)); last = p.stage; } } }).done;
console.log('total', ((performance.now() - t0)/1000).toFixed(2), r.ok);
