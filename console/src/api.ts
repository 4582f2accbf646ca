// One fetch wrapper for the engine's API: the IdToken in Authorization, a refresh (spec 4.1, /auth/refresh) a minute
// before it expires or after a 401, and the catalogued error body ({code, description}) as an ApiError.
import { getSession, setTokens, type Tokens } from './session';

/** One bad field of a 400 VALIDATION_FAILED answer, by its path in the body (`avail_suppression.value`). */
export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, readonly description: string, readonly fields: FieldProblem[] = []) {
    super(`${code}: ${description}`);
  }
}

function fieldProblems(value: unknown): FieldProblem[] {
  if (!Array.isArray(value)) return [];
  return value.filter((f): f is FieldProblem => typeof f === 'object' && f !== null
    && typeof (f as FieldProblem).field === 'string' && typeof (f as FieldProblem).message === 'string');
}

async function parse(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function failure(status: number, body: unknown): ApiError {
  if (typeof body === 'object' && body !== null) {
    const b = body as { code?: unknown; description?: unknown; fields?: unknown };
    return new ApiError(status, String(b.code ?? `HTTP_${status}`), String(b.description ?? ''), fieldProblems(b.fields));
  }
  return new ApiError(status, `HTTP_${status}`, typeof body === 'string' ? body.slice(0, 200) : '');
}

let refreshing: Promise<boolean> | null = null;

/** One refresh at a time, however many calls found the token stale. */
function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const session = getSession();
    if (!session) return false;
    const response = await fetch('/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ refreshToken: session.refreshToken }),
    });
    if (!response.ok) {
      setTokens(null);
      return false;
    }
    const body = (await parse(response)) as { data: Tokens };
    setTokens(body.data);
    return true;
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

export async function login(email: string, password: string): Promise<void> {
  const response = await fetch('/auth/authorize', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = await parse(response);
  if (!response.ok) throw failure(response.status, body);
  setTokens((body as { data: Tokens }).data);
}

/** An ID token that is valid for at least another minute (refreshed first when needed); null when signed out. */
export async function freshIdToken(): Promise<string | null> {
  const session = getSession();
  if (!session) return null;
  if (session.expiresAt - Date.now() < 60_000 && !(await refresh())) return null;
  return getSession()?.idToken ?? null;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const send = async (token: string | null) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token) headers.authorization = token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  };
  let response = await send(await freshIdToken());
  if (response.status === 401 && getSession() && (await refresh())) response = await send(getSession()?.idToken ?? null);
  const parsed = await parse(response);
  if (!response.ok) {
    if (response.status === 401) setTokens(null);
    throw failure(response.status, parsed);
  }
  return parsed as T;
}

/** A query string from the defined, non-empty values. */
export function query(values: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== '') params.set(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : '';
}
