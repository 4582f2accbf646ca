// Hash routes (#/live/workflows): the engine serves one index.html and every view is reachable by a link.
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  path: string;
  params: URLSearchParams;
}

function read(): Location {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?');
  return { path, params: new URLSearchParams(search) };
}

export function useLocation(): Location {
  const [loc, set] = useState(read);
  useEffect(() => {
    const on = () => set(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return loc;
}

export function navigate(path: string): void {
  location.hash = path;
}

export const href = (path: string): string => `#${path}`;

/** Matches `/vod/:guid` against a path; the named segments come back decoded. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) {
      if (!g) return null;
      params[w.slice(1)] = decodeURIComponent(g);
    } else if (w !== g) return null;
  }
  return params;
}
