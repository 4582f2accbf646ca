// Content types and caching of served media, shared by the media store mount (src/media) and the live mount (packager).
export const CONTENT_TYPES: Record<string, string> = {
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.mpd': 'application/dash+xml',
  '.m4s': 'video/iso.segment',
  '.mp4': 'video/mp4',
  '.m4a': 'audio/mp4',
  '.ts': 'video/mp2t',
  '.aac': 'audio/aac',
  '.vtt': 'text/vtt; charset=utf-8',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.json': 'application/json',
};
export const MANIFESTS = new Set(['.m3u8', '.mpd']);
export const SEGMENT_CACHE = 'public, max-age=31536000, immutable';
export const MANIFEST_CACHE = 'public, max-age=5';
