// Runs the real `engine` command (bin/engine.js) as a child process, as an operator would: for the cluster suite and
// for tests that read a run's logs. The port is learned from the "engine started" log line (PORT=0), or, when the logs
// go to a file, given up front and polled on /healthz.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface EngineProcess {
  name: string;
  child: ChildProcess;
  url: string;
  port: number;
  /** every line written to stdout and stderr so far */
  readonly logs: string[];
  /** resolves when the process has exited */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after a grace period */
  stop(): Promise<void>;
  /** SIGKILL at once: a machine lost */
  kill(): Promise<void>;
}

const BIN = path.resolve('bin/engine.js');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `engine start` with `env`. With `logFile` the process writes its logs straight into that file: under load a
 * pipe to this process would throttle it (stdout to a pipe is synchronous on Linux), which benchmarks must avoid.
 */
export async function startEngineProcess(name: string, env: Record<string, string>, options: { timeoutMs?: number; logFile?: string } = {}): Promise<EngineProcess> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const fixedPort = options.logFile ? await freePort() : 0;
  const fd = options.logFile ? fs.openSync(options.logFile, 'a') : undefined;
  const child = spawn(process.execPath, [BIN, 'start'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HOST: '127.0.0.1', ...env, PORT: String(fixedPort) },
    stdio: fd !== undefined ? ['ignore', fd, fd] : ['ignore', 'pipe', 'pipe'],
  });
  if (fd !== undefined) fs.closeSync(fd);
  const piped: string[] = [];
  const logs = () => (options.logFile ? fs.readFileSync(options.logFile, 'utf8').split('\n') : piped);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${logs().slice(-20).join('\n')}`)), timeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before starting:\n${logs().slice(-20).join('\n')}`));
    });
    if (options.logFile) {
      const poll = async () => {
        for (;;) {
          if (child.exitCode !== null) return;
          const ok = await fetch(`http://127.0.0.1:${fixedPort}/healthz`).then((r) => r.ok, () => false);
          if (ok) {
            clearTimeout(timer);
            resolve(fixedPort);
            return;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      void poll();
      return;
    }
    let pending = '';
    const onData = (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        piped.push(line);
        if (line.includes('"engine started"')) {
          try {
            const port = Number((JSON.parse(line) as { port?: number }).port);
            clearTimeout(timer);
            resolve(port);
          } catch {
            /* not JSON after all */
          }
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  });
  // a process that did not start in time is ended here: nobody else holds it to stop it later
  const port = await started.catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await exited;
  };
  return { name, child, url: `http://127.0.0.1:${port}`, port, get logs() { return logs(); }, exited, stop, kill };
}
