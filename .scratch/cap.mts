import { encodeVod } from '/work/main/vod-encoder/encode.js';
import { attachCaptions, generateCaptions } from '/work/main/vod-encoder/captions.js';
const e = await encodeVod('/tmp/m/speech.mp4', { outDir: '/tmp/m/cap', preset: 'ultrafast' }).done;
if (!e.ok) throw new Error('x');
const c = await generateCaptions('/tmp/m/speech.mp4');
if (!c.ok) throw new Error(c.error.reason);
console.log(c.value.vtt);
await attachCaptions('/tmp/m/cap', c.value.vtt, e.value.mediaInfo.durationSec);
