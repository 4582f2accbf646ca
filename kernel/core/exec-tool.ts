// Runs a CLI tool (ffmpeg, ffprobe, pocketsphinx) to completion: the VOD encoder and the live packager's archive merge.
import { execFile } from 'node:child_process';

export interface ToolOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a CLI tool to completion; never rejects (a spawn failure is exit code -1 with the message). An aborted signal
 * kills the tool and resolves once it has exited (execFile's own `signal` answers before the exit, while the tool may
 * still be writing files the caller is about to remove).
 */
export function execTool(bin: string, args: string[], timeoutMs = 600_000, signal?: AbortSignal): Promise<ToolOutput> {
  return new Promise((resolve) => {
    const onAbort = (): void => { child.kill('SIGKILL'); };
    const child = execFile(bin, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      signal?.removeEventListener('abort', onAbort);
      if (!err) return resolve({ exitCode: 0, stdout, stderr });
      const failed = err as NodeJS.ErrnoException & { code?: unknown; killed?: boolean; signal?: NodeJS.Signals | null };
      // A tool that ran and failed said why on stderr; err.message would repeat that stderr after the whole command
      // line (server paths included), so it is added only when the tool did not run to an exit code.
      if (typeof failed.code === 'number') return resolve({ exitCode: failed.code, stdout: stdout ?? '', stderr: stderr ?? '' });
      const why = failed.killed || failed.signal ? `killed by ${failed.signal ?? 'a signal'}${signal?.aborted ? '' : ' (time limit or outside kill)'}` : err.message;
      resolve({ exitCode: -1, stdout: stdout ?? '', stderr: `${stderr ?? ''}\n${why}` });
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
