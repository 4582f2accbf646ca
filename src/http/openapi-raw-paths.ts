// The paths served outside the JSON routes (raw handlers and mounts: playback, media, tus, health, metrics), described
// for /openapi.json by hand so the document covers the whole interface (issue 26 §5). Documentation only: these
// requests are not validated by zod; their handlers check them.
type JsonObject = Record<string, unknown>;

const M3U8 = 'application/vnd.apple.mpegurl';
const playlist = (description: string): JsonObject => ({ description, content: { [M3U8]: { schema: { type: 'string' } } } });
const errorJson = (description: string): JsonObject => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });
const text = (name: string, description: string, where: 'path' | 'query' = 'path', required = where === 'path'): JsonObject =>
  ({ name, in: where, required, description, schema: { type: 'string' } });

const guid = text('guid', 'the ad-insertion configuration (its masterEndpoint is /v1/master/{guid}/)');
const streamPath = text('path', "the stream's path after the configuration's source_url (may hold slashes)");
const sessionId = text('sessionId', 'the playback session');
const open = { security: [] };

function op(tag: string, summary: string, extra: JsonObject): JsonObject {
  return { tags: [tag], summary, ...open, ...extra };
}

/** The raw paths; `metricsSecurity` is the /metrics requirement (a bearer token when METRICS_TOKEN is set). */
export function rawPaths(metricsSecurity: JsonObject[]): Record<string, Record<string, JsonObject>> {
  return {
    '/': {
      get: op('system', 'A browser is redirected to the console; Accept: application/json gets an index of the API', {
        operationId: 'get_root',
        responses: { 302: { description: 'to /console/' }, 200: { description: 'the index', content: { 'application/json': { schema: { type: 'object' } } } } },
      }),
    },
    '/healthz': {
      get: op('system', 'Liveness: the process answers', {
        operationId: 'get_healthz',
        responses: { 200: { description: 'alive', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } } } } } } },
      }),
    },
    '/readyz': {
      get: op('system', 'Readiness: the database answers', {
        operationId: 'get_readyz',
        responses: {
          200: { description: 'ready', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ready' }, database: { const: 'ok' } } } } } },
          503: { description: 'the database does not answer', content: { 'application/json': { schema: { type: 'object' } } } },
        },
      }),
    },
    '/metrics': {
      get: {
        tags: ['system'], operationId: 'get_metrics', security: metricsSecurity,
        summary: 'Prometheus metrics (on the METRICS_PORT listener instead when that is set)',
        responses: { 200: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } }, 401: errorJson('METRICS_TOKEN is set and the bearer token is missing or wrong') },
      },
    },
    '/v1/master/{guid}/{path}': {
      get: op('playback', 'The stream\'s multivariant playlist through the SSAI proxy: every media playlist of a new (or the given) session', {
        operationId: 'get_v1_master',
        parameters: [guid, streamPath, text('sessionId', 'an existing session (from POST /v1/session)', 'query', false),
          text('ads.{name}', 'player parameters for the ad server URL ([player_params.name])', 'query', false),
          text('ads.debug', "1 or true: a new session keeps a debug log (GET /v1/debug/{guid}/{sessionId}); 0, false or absent: none", 'query', false)],
        responses: { 200: playlist('the multivariant playlist'), '4XX': errorJson('unknown configuration, bad path'), '5XX': errorJson('the origin failed (502, 504)') },
      }),
    },
    '/v1/session/{guid}/{path}': {
      post: op('playback', 'Starts a playback session explicitly (client-side tracking)', {
        operationId: 'post_v1_session',
        parameters: [guid, streamPath],
        requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', properties: { adsParams: { type: 'object', additionalProperties: { type: 'string' } }, debug: { type: 'boolean', description: 'the session keeps a debug log (as ads.debug=1)' } } } } } },
        responses: {
          200: { description: 'the session', content: { 'application/json': { schema: { type: 'object', properties: { manifestUrl: { type: 'string' }, trackingUrl: { type: 'string' } } } } } },
          '4XX': errorJson('unknown configuration, body over 64 KiB or not JSON'),
        },
      }),
    },
    '/v1/manifest/{guid}/{sessionId}/{n}.m3u8': {
      get: op('playback', "A session's media playlist with its ads stitched in", {
        operationId: 'get_v1_manifest',
        parameters: [guid, sessionId, text('n', 'the playlist number in the multivariant playlist')],
        responses: { 200: playlist('the stitched media playlist'), '4XX': errorJson('unknown session or playlist'), '5XX': errorJson('the origin failed') },
      }),
    },
    '/v1/segment/{guid}/{sessionId}/{availId}/{adIndex}/{n}/{segment}': {
      get: op('playback', "An ad segment of a session's break: redirects to the creative's segment and fires its beacons", {
        operationId: 'get_v1_segment',
        parameters: [guid, sessionId, text('availId', 'the break'), text('adIndex', 'the ad in the break'), text('n', 'the playlist number'), text('segment', 'the segment index with its extension')],
        responses: { 302: { description: 'to the creative segment under /media/creatives/' }, '4XX': errorJson('no such ad segment') },
      }),
    },
    '/v1/tracking/{guid}/{sessionId}': {
      get: op('playback', "The session's breaks and ads with their tracking events (client-side tracking)", {
        operationId: 'get_v1_tracking',
        parameters: [guid, sessionId],
        responses: { 200: { description: 'avails with ads and tracking events', content: { 'application/json': { schema: { type: 'object', properties: { avails: { type: 'array', items: { type: 'object' } } } } } } }, '4XX': errorJson('unknown session') },
      }),
    },
    '/v1/debug/{guid}/{sessionId}': {
      get: {
        tags: ['playback'], operationId: 'get_v1_debug', security: [{ idToken: [] }, { apiKey: [] }],
        summary: "A debug session's log (started with ads.debug=1): origin fetches, ad server requests with their raw answers, decisions and why; kept an hour (docs/ssai-ad-ops.md)",
        parameters: [guid, sessionId],
        responses: {
          200: { description: 'the entries, oldest first', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: true }, guid: { type: 'string' }, session: { type: 'string' }, entries: { type: 'array', items: { type: 'object' } } } } } } },
          401: errorJson('no credentials, or an invalid ID token or API key'),
          404: errorJson("DEBUG_LOG_NOT_FOUND: another organization's or an unknown configuration, a session without debug, or a log expired"),
        },
      },
    },
    '/live/{workflowId}/{file}': {
      get: op('playback', "A live channel's HLS output (index.m3u8, rendition playlists, segments)", {
        operationId: 'get_live_file',
        parameters: [text('workflowId', 'the channel\'s workflow'), text('file', 'index.m3u8, a rendition playlist or a segment')],
        responses: { 200: { description: 'the playlist or segment' }, 404: errorJson('no such file') },
      }),
    },
    '/linear/{channelGuid}/{token}/{playlist}.m3u8': {
      get: op('playback', "A broker virtual channel as live HLS (its playbackUrl; the token is in the channel's record)", {
        operationId: 'get_linear_playlist',
        parameters: [text('channelGuid', 'the broker channel'), text('token', 'the HMAC of the guid from the playbackUrl'), text('playlist', 'master, v{j} or audio')],
        responses: { 200: playlist('the playlist'), 404: errorJson('no such channel or playlist') },
      }),
    },
    '/media/{path}': {
      get: op('playback', 'The media store: VOD renditions, creatives, archives (byte ranges answered with 206)', {
        operationId: 'get_media_file',
        parameters: [text('path', 'the file under DATA_DIR/media (may hold slashes)'), { name: 'Range', in: 'header', required: false, schema: { type: 'string' } }],
        responses: { 200: { description: 'the file' }, 206: { description: 'the requested range' }, 404: errorJson('no such file'), 416: { description: 'range not satisfiable' } },
      }),
    },
    ...tusPaths('/broker/upload', [{ idToken: [] }]),
    ...tusPaths('/broker/private/upload', [{ apiKey: [] }]),
  };
}

/** A tus 1.0 endpoint (https://tus.io/protocols/resumable-upload): creation, offset, chunks, termination. */
function tusPaths(base: string, security: JsonObject[]): Record<string, Record<string, JsonObject>> {
  const id = base.replace(/[^a-z]+/g, '_');
  const tusVersion = { name: 'Tus-Resumable', in: 'header', required: true, schema: { const: '1.0.0' } };
  const uploadId = text('uploadId', 'from the Location of the creation');
  return {
    [base]: {
      options: { tags: ['uploads'], summary: 'tus discovery (versions, extensions, maximum size)', operationId: `options${id}`, security: [], responses: { 204: { description: 'Tus-Version, Tus-Extension, Tus-Max-Size' } } },
      post: {
        tags: ['uploads'], operationId: `post${id}`, security,
        summary: 'Creates a resumable upload of a VOD source: Upload-Metadata carries the guid of POST /broker/…/vod/meta',
        parameters: [tusVersion, { name: 'Upload-Length', in: 'header', required: true, schema: { type: 'integer' } }, { name: 'Upload-Metadata', in: 'header', required: true, schema: { type: 'string' } }],
        responses: { 201: { description: 'created; Location is the upload URL' }, '4XX': errorJson('no credentials, unknown VOD, bad metadata') },
      },
    },
    [`${base}/{uploadId}`]: {
      head: { tags: ['uploads'], operationId: `head${id}_id`, security, summary: 'The upload\'s offset (to resume)', parameters: [tusVersion, uploadId], responses: { 200: { description: 'Upload-Offset, Upload-Length' } } },
      patch: {
        tags: ['uploads'], operationId: `patch${id}_id`, security, summary: 'Appends bytes at Upload-Offset; the last chunk queues the VOD for encoding',
        parameters: [tusVersion, uploadId, { name: 'Upload-Offset', in: 'header', required: true, schema: { type: 'integer' } }],
        requestBody: { required: true, content: { 'application/offset+octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        responses: { 204: { description: 'appended; Upload-Offset is the new offset' }, 409: { description: 'the offset does not match' } },
      },
      delete: { tags: ['uploads'], operationId: `delete${id}_id`, security, summary: 'Terminates the upload', parameters: [tusVersion, uploadId], responses: { 204: { description: 'terminated' } } },
    },
  };
}
