import type { Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-live.js';
import * as m0003 from './0003-inputs-statistics.js';
import * as m0004 from './0004-vod.js';
import * as m0005 from './0005-adinserts.js';
import * as m0006 from './0006-broker.js';
import * as m0008 from './0008-notifications.js';
import * as m0009 from './0009-hardening.js';
import * as m0010 from './0010-channel-commands.js';
import * as m0011 from './0011-adinsert-ad-server-rate.js';
import * as m0012 from './0012-adinsert-insertion-mode.js';
import * as m0013 from './0013-adinsert-ad-policies.js';

/** Every migration, in order. A resource adds its own file and one line here. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-live': m0002,
  '0003-inputs-statistics': m0003,
  '0004-vod': m0004,
  '0005-adinserts': m0005,
  '0006-broker': m0006,
  '0008-notifications': m0008,
  '0009-hardening': m0009,
  '0010-channel-commands': m0010,
  '0011-adinsert-ad-server-rate': m0011,
  '0012-adinsert-insertion-mode': m0012,
  '0013-adinsert-ad-policies': m0013,
};
