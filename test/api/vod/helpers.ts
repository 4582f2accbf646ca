// Shared by the VOD API tests: an API key, metadata, uploads and waiting for a status.
import { readFile } from 'node:fs/promises';
import type { TestEngine } from '../../helpers/engine.js';

export async function apiKey(engine: TestEngine): Promise<string> {
  const auth = { Authorization: (await engine.login()).IdToken };
  const created = await engine.api('POST', '/broker/api-keys', { headers: auth, body: { name: `vod-${Date.now()}`, active: true } });
  if (created.status >= 300) throw new Error(`api key: ${created.status} ${JSON.stringify(created.body)}`);
  const guid = String(created.body.url).split('/').pop();
  const read = await engine.api('GET', `/broker/api-keys/${guid}`, { headers: auth });
  return read.body.data.value as string;
}

export async function createMeta(engine: TestEngine, key: string, body: Record<string, unknown> = {}): Promise<string> {
  const answer = await engine.api('POST', '/broker/private/vod/meta', { headers: { 'X-Api-Key': key }, body: { title: 'Clip', type: 'source', ...body } });
  if (answer.status !== 201) throw new Error(`meta: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data.guid as string;
}

export async function uploadPlain(engine: TestEngine, key: string, guid: string, file: string, contentType = 'video/mp4', fileName = 'clip.mp4') {
  const response = await fetch(`${engine.url}/broker/private/vod/upload/${guid}?fileName=${encodeURIComponent(fileName)}`, {
    method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': contentType }, body: await readFile(file),
  });
  return { status: response.status, body: (await response.json()) as any };
}

export async function waitForStatus(engine: TestEngine, guid: string, statuses: string[], timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = (await engine.api('GET', `/broker/vod/list/${guid}/info`)).body?.data;
    if (last && statuses.includes(last.status)) return last;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`VOD ${guid} did not reach ${statuses.join('|')} within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}
