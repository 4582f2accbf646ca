// Security headers on every answer (issue 20, defect 2), with one CSP that the pages the engine serves work under:
// /docs (swagger-ui from node_modules, no inline script) and /console (a Vite-built SPA: same-origin module scripts,
// hls.js playing through MSE from blob: URLs, its transmux worker from a blob:, API calls to the same origin).
import helmet from 'helmet';

export const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  // swagger-ui writes inline style attributes and <style> blocks; no script can be injected through styles.
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:', 'blob:'],
  'font-src': ["'self'", 'data:'],
  'media-src': ["'self'", 'blob:'],
  'worker-src': ["'self'", 'blob:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
} as const;

/** helmet for the Express app: CSP above, no framing, nosniff, no referrer. */
export function securityHeaders(): ReturnType<typeof helmet> {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    xFrameOptions: { action: 'deny' },
    // Media, ads and playlists are fetched by players on other origins (DESIGN.md: CORS on every playback answer);
    // helmet's default same-origin CORP would block a <video src> or <img> from another site.
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    // The engine does not terminate TLS: HSTS is for the HTTPS proxy in front of it to decide, not for plain-HTTP installs.
    strictTransportSecurity: false,
  });
}
