// The signed-in user: the tokens of POST /auth/authorize (spec 4.1) kept in sessionStorage, so a reload keeps the
// session and closing the tab ends it. The IdToken's claims name the organization (meta groups live under it).
import { useEffect, useState } from 'preact/hooks';

export interface Tokens {
  IdToken: string;
  RefreshToken: string;
  ExpiresIn: number;
}

export interface Session {
  idToken: string;
  refreshToken: string;
  /** epoch ms when the IdToken expires */
  expiresAt: number;
  email: string;
  role: string;
  organization: string;
  /** read, write, admin: what the role allows (the token's claim; the engine checks every call anyway) */
  permissions: string[];
}

const KEY = 'engine-console-session';
const listeners = new Set<() => void>();

function claims(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const value: unknown = JSON.parse(json);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

let current: Session | null = (() => {
  try {
    const text = sessionStorage.getItem(KEY);
    return text ? (JSON.parse(text) as Session) : null;
  } catch {
    return null;
  }
})();

export function getSession(): Session | null {
  return current;
}

export function setTokens(tokens: Tokens | null): void {
  if (tokens) {
    const c = claims(tokens.IdToken);
    current = {
      idToken: tokens.IdToken,
      refreshToken: tokens.RefreshToken,
      expiresAt: Date.now() + tokens.ExpiresIn * 1000,
      email: String(c.email ?? ''),
      role: String(c.role ?? ''),
      organization: String(c.organization ?? ''),
      permissions: Array.isArray(c.permissions) ? c.permissions.map(String) : [],
    };
    sessionStorage.setItem(KEY, JSON.stringify(current));
  } else {
    current = null;
    sessionStorage.removeItem(KEY);
  }
  for (const listener of listeners) listener();
}

export function useSession(): Session | null {
  const [session, set] = useState(current);
  useEffect(() => {
    const listener = () => set(current);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return session;
}

export function can(session: Session | null, permission: 'read' | 'write' | 'admin'): boolean {
  return session?.permissions?.includes(permission) ?? false;
}
