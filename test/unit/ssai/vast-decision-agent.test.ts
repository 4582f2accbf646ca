// The ad server is asked through the decision module's own agent (ssai/decide/vast-decision.ts): undici's global
// dispatcher slot is shared with Node's bundled undici, and once a fetch() has run first it holds Node's own agent,
// which refused the module's handlers (`invalid onError method`). Tried in a fresh process whose first request is a
// fetch() (a test runner may have filled the slot already).
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VastDecisionClient } from '../../../ssai/decide/vast-decision.js';

const VAST = `<VAST version="4.0"><Ad id="a1"><InLine><AdSystem>t</AdSystem><AdTitle>t</AdTitle><Impression><![CDATA[http://t.test/imp]]></Impression>
<Creatives><Creative id="c1"><Linear><Duration>00:00:10</Duration><MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="640" height="360"><![CDATA[http://t.test/a.mp4]]></MediaFile></MediaFiles></Linear></Creative></Creatives></InLine></Ad></VAST>`;
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/xml' }); res.end(VAST); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('the ad server\'s agent', () => {
  it('decides after a fetch() in the same thread installed Node\'s own global dispatcher', async () => {
    const script = `const first = await fetch(${JSON.stringify(`${base}/first`)});
      const { VastDecisionClient } = await import(${JSON.stringify(new URL('../../../ssai/decide/vast-decision.ts', import.meta.url).href)});
      const r = await new VastDecisionClient().decide({ adServerUrl: ${JSON.stringify(`${base}/vast`)}, sessionId: 's1', availIndex: 0, availDuration: 30 });
      console.log(JSON.stringify({ first: first.status, ads: r.ok ? r.ads.map((a) => a.adId) : r.error.message }));`;
    const out = await new Promise<string>((resolve, reject) => execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))));
    expect(JSON.parse(out.trim().split('\n').pop() ?? '{}')).toEqual({ first: 200, ads: ['a1'] });
  });
  it('decides in this process too', async () => {
    const r = await new VastDecisionClient().decide({ adServerUrl: `${base}/vast`, sessionId: 's1', availIndex: 0, availDuration: 30 });
    expect(r.ok ? r.ads.map((a) => a.adId) : r.error.message).toEqual(['a1']);
  });
});
