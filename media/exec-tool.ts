// Runs a CLI tool (ffmpeg, ffprobe, pocketsphinx) to completion: the VOD encoder and the live packager's archive merge.
// An FfmpegProcess that keeps all its output, with execFile's answers (the form these callers were written against).
import { FfmpegProcess } from './ffmpeg-process.js';

export interface ToolOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Output kept per stream; more kills the tool (execFile's maxBuffer). */
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * Runs a CLI tool to completion; never rejects (a spawn failure is exit code -1 with the message). An aborted signal
 * kills the tool and resolves once it has exited (the caller may be about to remove the files it writes).
 */
export async function execTool(bin: string, args: string[], timeoutMs = 600_000, signal?: AbortSignal): Promise<ToolOutput> {
  // not in a group of its own: like execFile, it goes with the engine's terminal
  const exit = await new FfmpegProcess({
    bin, args, group: false, keepOutput: MAX_OUTPUT_BYTES, timeoutMs, ...(signal ? { abort: signal } : {}),
  }).exited;
  const { stdout, stderr } = exit;
  if (exit.error === undefined && exit.code === 0 && exit.signal === null) return { exitCode: 0, stdout, stderr };
  // A tool that ran and failed said why on stderr; the why is added only when it did not run to an exit code.
  if (exit.error === undefined && exit.code !== null && exit.code >= 0) return { exitCode: exit.code, stdout, stderr };
  const why = exit.error ?? `killed by ${exit.signal ?? 'a signal'}${signal?.aborted ? '' : ' (time limit or outside kill)'}`;
  return { exitCode: -1, stdout, stderr: `${stderr}\n${why}` };
}
