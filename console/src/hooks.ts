// Loading state for API reads, with an optional poll while a page watches something change (a channel, an encode).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.description ? `${error.description} (${error.code})` : error.code;
  return error instanceof Error ? error.message : String(error);
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[], pollMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let alive = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const value = await loadRef.current();
        if (!alive) return;
        setData(value);
        setError(null);
      } catch (e) {
        if (alive) setError(describe(e));
      } finally {
        if (alive) {
          setLoading(false);
          if (pollMs) timer = setTimeout(run, pollMs);
        }
      }
    };
    void run();
    return () => {
      alive = false;
      if (timer) clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick, pollMs]);
  return { data, error, loading, reload };
}

/** Runs an action, keeps its error for display and reports whether it is busy. */
export function useAction(): { busy: boolean; error: string | null; run: (action: () => Promise<void>) => Promise<void>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}
