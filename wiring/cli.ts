import { parseArgs } from 'node:util';
import { CONFIG_VARIABLES, ConfigError, ROLES } from '../kernel/core/config.js';
import { startEngine } from './engine.js';
import { isStoreOutage } from '../kernel/store/outage.js';

const HELP = `engine: media pipeline engine (live channels, VOD encoding, server-side ad insertion)

Usage:
  engine [start] [--roles api,ssai,worker,packager]   run the engine (all roles by default)
  engine check-playlist <url> [--reloads N]          check an HLS playlist and its media playlists against RFC 8216,
                                                      or a DASH MPD: Periods, timelines, presentationTimeOffset, tracks,
                                                      segment availability (exit 1 when an error is found)
  engine device --id ID --api-key KEY|--api-key-file FILE [--engine-url URL] [--name NAME] [--interval SECONDS]
                                                      act as a connected device: heartbeat, apply the settings the
                                                      engine asks for, push a test signal to the device's managed input
  engine --help                                       this text

Roles (--roles or ENGINE_ROLES): ${ROLES.join(', ')}
  api       the REST interface (auth service, live service, broker)
  ssai      the manifest proxy (/v1/master, /v1/manifest, /v1/segment, /v1/tracking)
  worker    the VOD encode worker and ad creative preparation
  packager  the live channel runtime

Configuration (environment variables):
${CONFIG_VARIABLES.map(([name, fallback, meaning]) => `  ${name.padEnd(22)} ${meaning}\n  ${''.padEnd(22)} default: ${fallback}`).join('\n')}
`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' }, roles: { type: 'string' }, reloads: { type: 'string' },
      id: { type: 'string' }, 'api-key': { type: 'string' }, 'api-key-file': { type: 'string' }, 'engine-url': { type: 'string' },
      name: { type: 'string' }, interval: { type: 'string' },
    },
  });
  const command = positionals[0] ?? 'start';
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  if (command === 'check-playlist') {
    const url = positionals[1];
    if (!url) throw new ConfigError('url', 'check-playlist needs the playlist URL');
    const reloads = Number(values.reloads ?? '1');
    if (!Number.isInteger(reloads) || reloads < 1) throw new ConfigError('--reloads', 'must be a positive integer');
    const { checkPlaylistUrl } = await import('../ssai/check/check-url.js');
    const findings = await checkPlaylistUrl(url, reloads);
    for (const f of findings) process.stdout.write(`${f.severity === 'warning' ? 'warning ' : ''}${f.rule}: ${f.message}\n`);
    const errors = findings.filter((f) => f.severity === 'error').length;
    process.stdout.write(findings.length === 0 ? 'ok: nothing the checks forbid was found\n' : `${errors} error(s), ${findings.length - errors} warning(s)\n`);
    // warnings (a track missing in a Period, a live playlist without segments) are printed; only errors fail
    process.exitCode = errors === 0 ? 0 : 1;
    return;
  }
  if (command === 'device') {
    const { runDevice } = await import('../packager/ingest/device/device-command.js');
    await runDevice(values);
    return;
  }
  if (command !== 'start') {
    process.stderr.write(`unknown command ${command}\n\n${HELP}`);
    process.exitCode = 2;
    return;
  }
  const engine = await startEngine(values.roles ? { roles: values.roles } : {});
  // Every store client handles its own outage (issue 27); a store error that still escapes somewhere is logged, not
  // allowed to end the process. Anything else ends it, as Node does by default (rethrown: an uncaught exception).
  process.on('unhandledRejection', (reason) => {
    if (!isStoreOutage(reason)) throw reason;
    engine.ctx.logger.error({ err: reason }, 'a store outage error was not handled where it happened; the engine goes on');
  });
  const stop = (signal: string) => {
    engine.ctx.logger.info({ signal }, 'stopping');
    void engine.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`engine: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`engine: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
