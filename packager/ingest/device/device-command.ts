// `engine device …` (wiring/cli.ts): reads the flags and the engine's configuration, runs a DeviceAgent until
// SIGINT/SIGTERM, and stops its push before exiting.
import { readFile } from 'node:fs/promises';
import { ConfigError, loadConfig } from '../../../kernel/core/config.js';
import { createLogger } from '../../../kernel/core/logger.js';
import { DeviceAgent } from './device-agent.js';

export interface DeviceFlags {
  id?: string | undefined;
  'api-key'?: string | undefined;
  'api-key-file'?: string | undefined;
  'engine-url'?: string | undefined;
  name?: string | undefined;
  interval?: string | undefined;
}

export async function runDevice(flags: DeviceFlags): Promise<void> {
  const config = loadConfig();
  if (!flags.id || !/^[A-Za-z0-9._:-]{1,64}$/.test(flags.id)) throw new ConfigError('--id', 'give the device id: letters, digits, ".", "_", ":" and "-", up to 64');
  // A key file keeps the key out of the process list.
  const apiKey = flags['api-key'] ?? (flags['api-key-file'] ? (await readFile(flags['api-key-file'], 'utf8')).trim() : undefined);
  if (!apiKey) throw new ConfigError('--api-key', 'give a live API key of the device\'s organization (or --api-key-file)');
  const interval = Number(flags.interval ?? '10');
  if (!Number.isFinite(interval) || interval < 0.1 || interval > 50) throw new ConfigError('--interval', 'seconds between heartbeats, 0.1 to 50 (a device is online while it beat in the last 60 s)');
  const logger = createLogger(config.logLevel, 'device');
  const agent = new DeviceAgent({
    engineUrl: flags['engine-url'] ?? config.publicUrl,
    apiKey,
    deviceId: flags.id,
    name: flags.name,
    heartbeatMs: Math.round(interval * 1000),
    ffmpegPath: config.ffmpegPath,
    logger,
  });
  // Signals are taken from the start: a stop during the first heartbeat still stops the push cleanly.
  let stopping: Promise<void> | undefined;
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'device stopping');
      stopping ??= agent.stop();
      void stopping.then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await agent.start();
  if (!stopping) logger.info({ deviceId: flags.id }, 'device running');
  await stopped;
}
