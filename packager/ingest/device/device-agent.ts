// `engine device`: a process that acts as the one implemented connected-device kind (spec 2.4, issue 18 part 8).
// It heartbeats to the engine (which registers it on the first beat), applies the settings the engine asks for
// and confirms them with their version (the settings-sync state), and pushes its signal to its managed input
// once the engine gave it one, restarting the push when it fails or its settings or input change.
import type { Logger } from 'pino';
import { spawnFfmpeg, type FfmpegProcess } from '../../../media/ffmpeg-process.js';
import { signalArgs, signalSettings } from './device-signal.js';

export interface DeviceAgentOptions {
  /** the engine's base URL (its PUBLIC_URL) */
  engineUrl: string;
  /** a live API key of the device's organization (X-Api-Key) */
  apiKey: string;
  deviceId: string;
  name?: string | undefined;
  /** settings before the engine sends any */
  settings?: Record<string, unknown>;
  heartbeatMs?: number;
  ffmpegPath: string;
  logger: Logger;
}

/** What the heartbeat answers (src/devices/device.store.ts DeviceView), as far as the device reads it. */
interface HeartbeatAnswer {
  managedInputId?: string;
  settingsSync: { state: string; desiredVersion: number | null; desiredSettings?: Record<string, unknown> };
}

interface InputAnswer {
  ingest?: { url: string | null };
}

export interface DeviceAgentState {
  settings: Record<string, unknown>;
  settingsVersion: number | undefined;
  managedInputId: string | undefined;
  ingestUrl: string | undefined;
  /** the ffmpeg arguments of the push running now, if any */
  pushArgs: string[] | undefined;
  pushPid: number | undefined;
  pushStarts: number;
  lastError: string | undefined;
}

export class DeviceAgentError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'DeviceAgentError';
  }
}

/** Keeps SRT passphrases out of logs (ffmpeg repeats the URL in its errors). */
function redact(text: string): string {
  return text.replace(/passphrase=[^&\s]+/g, 'passphrase=…');
}

/** A push that failed is tried again after this long, doubling up to the maximum. */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export class DeviceAgent {
  private readonly state: DeviceAgentState;
  private timer: NodeJS.Timeout | undefined;
  private push: { process: FfmpegProcess; key: string } | undefined;
  private retryAt = 0;
  private retryMs = RETRY_MIN_MS;
  private running = false;
  private beating: Promise<void> | undefined;

  constructor(private readonly options: DeviceAgentOptions) {
    this.state = { settings: options.settings ?? {}, settingsVersion: undefined, managedInputId: undefined, ingestUrl: undefined, pushArgs: undefined, pushPid: undefined, pushStarts: 0, lastError: undefined };
  }

  snapshot(): DeviceAgentState {
    return { ...this.state, settings: { ...this.state.settings } };
  }

  /** First heartbeat (rejects when the engine refuses the device: wrong key, another organization's id), then the loop. */
  async start(): Promise<void> {
    this.running = true;
    await this.tick();
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.beating;
    await this.stopPush();
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.beating = this.tick().catch((error: unknown) => {
        this.state.lastError = error instanceof Error ? error.message : String(error);
        this.options.logger.warn({ err: this.state.lastError }, 'device heartbeat failed');
      });
      void this.beating.finally(() => this.schedule());
    }, this.options.heartbeatMs ?? 10_000);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.options.engineUrl.replace(/\/+$/, '')}${path}`, {
      method,
      headers: { 'x-api-key': this.options.apiKey, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    if (!response.ok) {
      let description = text;
      try {
        description = (JSON.parse(text) as { description?: string }).description ?? text;
      } catch {
        // not JSON
      }
      throw new DeviceAgentError(`${method} ${path}: ${response.status} ${description}`, response.status);
    }
    return JSON.parse(text) as T;
  }

  private heartbeat(): Promise<HeartbeatAnswer> {
    const { name } = this.options;
    return this.request<HeartbeatAnswer>('POST', `/devices/${encodeURIComponent(this.options.deviceId)}/heartbeat`, {
      ...(name ? { name } : {}),
      settings: this.state.settings,
      ...(this.state.settingsVersion !== undefined ? { settingsVersion: this.state.settingsVersion } : {}),
    });
  }

  private async tick(): Promise<void> {
    let answer = await this.heartbeat();
    const sync = answer.settingsSync;
    if (sync.state === 'PENDING' && sync.desiredSettings && sync.desiredVersion !== null) {
      // Apply, then confirm at once: the engine shows IN_SYNC without waiting for the next beat.
      this.state.settings = sync.desiredSettings;
      this.state.settingsVersion = sync.desiredVersion;
      this.options.logger.info({ settingsVersion: sync.desiredVersion }, 'device settings applied');
      answer = await this.heartbeat();
    }
    this.state.lastError = undefined;
    if (answer.managedInputId !== this.state.managedInputId || (answer.managedInputId && !this.state.ingestUrl)) {
      this.state.managedInputId = answer.managedInputId;
      this.state.ingestUrl = answer.managedInputId ? await this.ingestUrlOf(answer.managedInputId) : undefined;
    }
    await this.reconcilePush();
  }

  private async ingestUrlOf(inputId: string): Promise<string | undefined> {
    const input = await this.request<InputAnswer>('GET', `/inputs/${encodeURIComponent(inputId)}`);
    return input.ingest?.url ?? undefined;
  }

  /** Runs exactly the push the current input and settings call for. */
  private async reconcilePush(): Promise<void> {
    const url = this.state.ingestUrl;
    const args = url ? signalArgs(url, signalSettings(this.state.settings)) : undefined;
    const key = args ? args.join(' ') : '';
    if (this.push && this.push.key === key) return;
    await this.stopPush();
    if (!args || !this.running || Date.now() < this.retryAt) return;
    const child = spawnFfmpeg(this.options.ffmpegPath, args);
    this.push = { process: child, key };
    this.state.pushArgs = args;
    this.state.pushPid = child.pid;
    this.state.pushStarts += 1;
    this.options.logger.info({ url: url ? redact(url) : undefined, ffmpegPid: child.pid }, 'device push started');
    const startedAt = Date.now();
    void child.exited.then((exit) => {
      if (this.push?.process !== child) return;
      this.push = undefined;
      this.state.pushArgs = undefined;
      this.state.pushPid = undefined;
      // A push that ran a while was healthy: start over from the shortest wait.
      this.retryMs = Date.now() - startedAt > RETRY_MAX_MS ? RETRY_MIN_MS : Math.min(this.retryMs * 2, RETRY_MAX_MS);
      this.retryAt = Date.now() + this.retryMs;
      const stderr = redact(child.stderrTail());
      this.state.lastError = `push exited (${exit.code ?? exit.signal ?? 'unknown'}): ${stderr.split('\n').pop() ?? ''}`;
      this.options.logger.warn({ code: exit.code, signal: exit.signal, retryInMs: this.retryMs, stderr }, 'device push ended');
    });
  }

  private async stopPush(): Promise<void> {
    const push = this.push;
    this.push = undefined;
    this.state.pushArgs = undefined;
    this.state.pushPid = undefined;
    if (push) await push.process.stop();
  }
}
