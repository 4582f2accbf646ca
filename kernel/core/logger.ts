import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs, one line per event; `redact` keeps secrets out of request logs. */
export function createLogger(level: string, name = 'engine'): Logger {
  return pino({
    name,
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'password', 'value', 'refreshToken'],
      censor: '[redacted]',
    },
  });
}
