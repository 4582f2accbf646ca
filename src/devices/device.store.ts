// Connected devices (spec 2.4): a device registers and reports through its heartbeat; the engine keeps
// what it reported (name, settings, settings version, last seen) and the settings it wants the device to
// apply (set through the device's managed input), from which the settings-sync state follows.
import type { Db, Tx } from '../../kernel/store/database.js';
import { fromJson, toJson } from '../../kernel/store/database.js';

export interface DeviceTable {
  id: string;
  organization_id: string;
  name: string;
  /** JSON object: the settings the device last reported */
  settings: string;
  settings_version: number | null;
  /** JSON object: settings the engine asked for and the device has not confirmed yet */
  desired_settings: string | null;
  desired_settings_version: number | null;
  last_seen_at: number | null;
  created_at: number;
}

declare module '../../kernel/store/database.js' {
  interface Tables {
    devices: DeviceTable;
  }
}

/** A device is online while its last heartbeat is younger than this. */
export const ONLINE_WINDOW_MS = 60_000;

export type SettingsSyncState = 'IN_SYNC' | 'PENDING' | 'UNKNOWN';

export interface Device {
  id: string;
  name: string;
  settings: Record<string, unknown>;
  settingsVersion: number | undefined;
  desiredSettings: Record<string, unknown> | undefined;
  desiredSettingsVersion: number | undefined;
  lastSeenAt: number | undefined;
}

export interface DeviceView {
  id: string;
  name: string;
  managedInputId?: string;
  connectivity: { online: boolean; lastSeenAt: string | null };
  settingsSync: { state: SettingsSyncState; reportedVersion: number | null; desiredVersion: number | null; desiredSettings?: Record<string, unknown> };
  settings: Record<string, unknown>;
}

function toDevice(row: DeviceTable): Device {
  return {
    id: row.id,
    name: row.name,
    settings: fromJson<Record<string, unknown>>(row.settings, {}),
    settingsVersion: row.settings_version === null ? undefined : Number(row.settings_version),
    desiredSettings: row.desired_settings === null ? undefined : fromJson<Record<string, unknown>>(row.desired_settings, {}),
    desiredSettingsVersion: row.desired_settings_version === null ? undefined : Number(row.desired_settings_version),
    lastSeenAt: row.last_seen_at === null ? undefined : Number(row.last_seen_at),
  };
}

/**
 * PENDING: the engine asked for a settings version the device has not reported yet. UNKNOWN: nothing is
 * pending but the device never said which settings version it runs. IN_SYNC otherwise.
 */
export function settingsSyncState(device: Pick<Device, 'settingsVersion' | 'desiredSettingsVersion'>): SettingsSyncState {
  if (device.desiredSettingsVersion !== undefined && (device.settingsVersion === undefined || device.settingsVersion < device.desiredSettingsVersion)) {
    return 'PENDING';
  }
  return device.settingsVersion === undefined ? 'UNKNOWN' : 'IN_SYNC';
}

export function isOnline(device: Pick<Device, 'lastSeenAt'>, nowMs: number): boolean {
  return device.lastSeenAt !== undefined && nowMs - device.lastSeenAt < ONLINE_WINDOW_MS;
}

export function deviceView(device: Device, nowMs: number, managedInputId: string | undefined): DeviceView {
  const state = settingsSyncState(device);
  return {
    id: device.id,
    name: device.name,
    ...(managedInputId ? { managedInputId } : {}),
    connectivity: { online: isOnline(device, nowMs), lastSeenAt: device.lastSeenAt === undefined ? null : new Date(device.lastSeenAt).toISOString() },
    settingsSync: {
      state,
      reportedVersion: device.settingsVersion ?? null,
      desiredVersion: device.desiredSettingsVersion ?? null,
      ...(state === 'PENDING' && device.desiredSettings ? { desiredSettings: device.desiredSettings } : {}),
    },
    settings: device.settings,
  };
}

export interface Heartbeat {
  name?: string | undefined;
  settings?: Record<string, unknown> | undefined;
  settingsVersion?: number | undefined;
}

export class DeviceStore {
  constructor(private readonly db: Db | Tx) {}

  async list(organizationId: string): Promise<Device[]> {
    const rows = await this.db.selectFrom('devices').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toDevice);
  }

  async get(organizationId: string, id: string): Promise<Device | undefined> {
    const row = await this.db.selectFrom('devices').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row ? toDevice(row) : undefined;
  }

  /** The organization owning a device id, if any: a heartbeat for another organization's device is a 404. */
  async owner(id: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('devices').select('organization_id').where('id', '=', id).executeTakeFirst();
    return row?.organization_id;
  }

  /**
   * Records a heartbeat; the first one registers the device in the caller's organization. Undefined when
   * the id belongs to another organization (it registered the device first).
   */
  async heartbeat(organizationId: string, id: string, beat: Heartbeat, now: number): Promise<Device | undefined> {
    const existing = await this.get(organizationId, id);
    // Concurrent first heartbeats: one insert wins, the others update the row it wrote.
    const inserted = existing
      ? undefined
      : await this.db
        .insertInto('devices')
        .values({
          id,
          organization_id: organizationId,
          name: beat.name ?? id,
          settings: toJson(beat.settings ?? {}),
          settings_version: beat.settingsVersion ?? null,
          desired_settings: null,
          desired_settings_version: null,
          last_seen_at: now,
          created_at: now,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
    if (!inserted || Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) {
      await this.db
        .updateTable('devices')
        .set({
          last_seen_at: now,
          ...(beat.name !== undefined ? { name: beat.name } : {}),
          ...(beat.settings !== undefined ? { settings: toJson(beat.settings) } : {}),
          ...(beat.settingsVersion !== undefined ? { settings_version: beat.settingsVersion } : {}),
        })
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .execute();
    }
    return this.get(organizationId, id);
  }

  /** Asks the device to apply `settings`: a version above any the device or the engine used before. */
  async requestSettings(organizationId: string, id: string, settings: Record<string, unknown>): Promise<Device | undefined> {
    const device = await this.get(organizationId, id);
    if (!device) return undefined;
    const version = Math.max(device.settingsVersion ?? 0, device.desiredSettingsVersion ?? 0) + 1;
    await this.db
      .updateTable('devices')
      .set({ desired_settings: toJson(settings), desired_settings_version: version })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
    return { ...device, desiredSettings: settings, desiredSettingsVersion: version };
  }
}
