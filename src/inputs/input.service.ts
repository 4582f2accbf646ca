// The rules of managed inputs (spec 2.4, 3.4, 7, 8) between the router and the stores.
import type { EngineContext } from '../../kernel/context.js';
import { engineError, notFound } from '../../kernel/core/errors.js';
import { newId } from '../../kernel/core/ids.js';
import { DeviceStore, deviceView, type DeviceView } from '../devices/device.store.js';
import { allocateIngest, freePort, needsPort } from './ingest.js';
import { ingestHost } from '../../kernel/seams/managed-inputs.js';
import { canEdit, inputStatus, pendingWorkflows, workflowUsesByInput, type InputStatus, type WorkflowUse } from './input-usage.js';
import { assertInput, OPEN_CIDRS, PUSH_PROTOCOLS, type CreateInputBody, type UpdateInputBody } from './input.schema.js';
import { InputStore, type InputChange, type ManagedInput } from './input.store.js';

/** What GET /inputs and GET /inputs/{id} answer; a password is never returned, only whether one is set. */
export interface InputView {
  id: string;
  name: string;
  type: ManagedInput['type'];
  protocol?: string;
  deviceId?: string;
  region: string;
  status: InputStatus;
  cidrs?: string[];
  source?: { url: string; username: string | null; passwordSet: boolean };
  ingest?: { url: string; streamKey: string | null; port: number | null };
  created: string;
  updated: string;
  /** detail only: workflows configured to use the input that have not finished (spec 2.4) */
  workflows?: WorkflowUse[];
  /** detail of a CONNECTED_DEVICE input only: the device with all its settings */
  device?: DeviceView | null;
}

function view(input: ManagedInput, uses: readonly WorkflowUse[]): InputView {
  const isPush = input.protocol !== undefined && PUSH_PROTOCOLS.includes(input.protocol);
  return {
    id: input.id,
    name: input.name,
    type: input.type,
    ...(input.protocol ? { protocol: input.protocol } : {}),
    ...(input.deviceId ? { deviceId: input.deviceId } : {}),
    region: input.region,
    status: inputStatus(uses),
    ...(isPush ? { cidrs: input.cidrs } : {}),
    ...(input.url ? { source: { url: input.url, username: input.username ?? null, passwordSet: input.hasPassword } } : {}),
    ...(input.ingest.url ? { ingest: { url: input.ingest.url, streamKey: input.ingest.streamKey ?? null, port: input.ingest.port ?? null } } : {}),
    created: new Date(input.createdAt).toISOString(),
    updated: new Date(input.updatedAt).toISOString(),
  };
}

/** Ports are taken by a unique column; a concurrent creation that took ours makes us pick again. */
const PORT_ATTEMPTS = 5;

export class InputService {
  private readonly inputs: InputStore;
  private readonly devices: DeviceStore;

  constructor(private readonly ctx: EngineContext) {
    this.inputs = new InputStore(ctx.store.db);
    this.devices = new DeviceStore(ctx.store.db);
  }

  private get regions() {
    return { all: this.ctx.config.regions, default: this.ctx.config.defaultRegion };
  }

  async create(organizationId: string, body: CreateInputBody): Promise<InputView> {
    const region = body.region ?? this.ctx.config.defaultRegion;
    assertInput({ type: body.type, protocol: body.protocol, deviceId: body.deviceId, region, cidrs: body.cidrs, url: body.url, username: body.username, password: body.password }, this.regions);
    const type = body.type;
    const protocol = type === 'VIRTUAL_INPUT' ? body.protocol : undefined;
    const deviceId = type === 'CONNECTED_DEVICE' ? body.deviceId : undefined;
    if (deviceId) {
      if (!(await this.devices.get(organizationId, deviceId))) {
        throw engineError('VALIDATION_FAILED', `invalid body: deviceId: no device ${deviceId} has reported to this organization`, {
          fields: [{ field: 'deviceId', message: 'no such device (a device appears with its first heartbeat)' }],
        });
      }
      await this.assertDeviceFree(organizationId, deviceId);
    }
    const isPush = protocol !== undefined && PUSH_PROTOCOLS.includes(protocol);
    const host = ingestHost(this.ctx.config.publicUrl);
    for (let attempt = 1; ; attempt += 1) {
      let port: number | undefined;
      if (needsPort(type, protocol)) {
        port = freePort(await this.inputs.usedPorts());
        if (port === undefined) throw engineError('INGEST_PORTS_EXHAUSTED');
      }
      try {
        const input = await this.inputs.insert({
          id: newId(),
          organizationId,
          name: body.name,
          type,
          protocol,
          deviceId,
          region,
          cidrs: isPush ? (body.cidrs && body.cidrs.length > 0 ? body.cidrs : OPEN_CIDRS) : [],
          url: body.url,
          username: body.username,
          passwordSealed: body.password !== undefined ? this.ctx.vault.encrypt(body.password) : undefined,
          ingest: allocateIngest(host, type, protocol, port, this.ctx.config.rtmpPort),
          now: this.ctx.clock.nowMs(),
        });
        return view(input, []);
      } catch (error) {
        // A unique column refused the row: the device got an input meanwhile (409) or the port was taken (retry).
        if (deviceId) await this.assertDeviceFree(organizationId, deviceId);
        if (attempt >= PORT_ATTEMPTS || port === undefined) throw error;
      }
    }
  }

  private async assertDeviceFree(organizationId: string, deviceId: string): Promise<void> {
    const existing = await this.inputs.byDevice(organizationId, deviceId);
    if (existing) throw engineError('DEVICE_HAS_INPUT', `device ${deviceId} already has the managed input ${existing.id}`);
  }

  async list(organizationId: string): Promise<InputView[]> {
    const [inputs, uses] = await Promise.all([this.inputs.list(organizationId), workflowUsesByInput(this.ctx.store.db, organizationId)]);
    return inputs.map((input) => view(input, uses.get(input.id) ?? []));
  }

  async detail(organizationId: string, id: string): Promise<InputView> {
    const input = await this.inputs.get(organizationId, id);
    if (!input) throw notFound('managed input', id);
    return this.detailOf(organizationId, input);
  }

  private async detailOf(organizationId: string, input: ManagedInput): Promise<InputView> {
    const uses = (await workflowUsesByInput(this.ctx.store.db, organizationId, input.id)).get(input.id) ?? [];
    const answer: InputView = { ...view(input, uses), workflows: pendingWorkflows(uses) };
    if (input.deviceId) {
      const device = await this.devices.get(organizationId, input.deviceId);
      answer.device = device ? deviceView(device, this.ctx.clock.nowMs(), input.id) : null;
    }
    return answer;
  }

  async update(organizationId: string, id: string, body: UpdateInputBody): Promise<InputView> {
    const input = await this.inputs.get(organizationId, id);
    if (!input) throw notFound('managed input', id);
    const status = inputStatus((await workflowUsesByInput(this.ctx.store.db, organizationId, id)).get(id) ?? []);
    if (!canEdit(status)) {
      throw engineError('INPUT_NOT_EDITABLE', `managed input ${id} is ${status}; spec 3.4 allows edits only when it is neither ATTACHED nor DETACHED`);
    }
    if (body.deviceSettings !== undefined && input.type !== 'CONNECTED_DEVICE') {
      throw engineError('VALIDATION_FAILED', 'invalid body: deviceSettings: only a CONNECTED_DEVICE input has device settings', {
        fields: [{ field: 'deviceSettings', message: 'only a CONNECTED_DEVICE input has device settings' }],
      });
    }
    // Check the input as it will be after the change: e.g. two CIDRs in a non-default region.
    const username = body.username === null ? undefined : (body.username ?? input.username);
    const password = body.password === null ? undefined : body.password !== undefined ? body.password : input.hasPassword ? 'unchanged' : undefined;
    assertInput(
      {
        type: input.type,
        protocol: input.protocol,
        deviceId: input.deviceId,
        region: input.region,
        cidrs: body.cidrs ?? (input.protocol && PUSH_PROTOCOLS.includes(input.protocol) ? input.cidrs : undefined),
        url: body.url ?? input.url,
        username,
        password,
      },
      this.regions,
    );
    const change: InputChange = {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.cidrs !== undefined ? { cidrs: body.cidrs.length > 0 ? body.cidrs : OPEN_CIDRS } : {}),
      ...(body.url !== undefined ? { url: body.url } : {}),
      ...(body.username !== undefined ? { username: body.username } : {}),
      ...(body.password !== undefined ? { passwordSealed: body.password === null ? null : this.ctx.vault.encrypt(body.password) } : {}),
    };
    const deviceId = input.deviceId;
    // The input row and its device's desired settings change together (inside, only trx: SQLite has one connection).
    await this.ctx.store.db.transaction().execute(async (trx) => {
      await new InputStore(trx).update(organizationId, id, change, this.ctx.clock.nowMs());
      if (body.deviceSettings !== undefined && deviceId) {
        await new DeviceStore(trx).requestSettings(organizationId, deviceId, body.deviceSettings);
      }
    });
    return this.detail(organizationId, id);
  }

  async remove(organizationId: string, id: string): Promise<void> {
    const input = await this.inputs.get(organizationId, id);
    if (!input) throw notFound('managed input', id);
    const status = inputStatus((await workflowUsesByInput(this.ctx.store.db, organizationId, id)).get(id) ?? []);
    if (status === 'ACTIVE') throw engineError('INPUT_IN_USE', `managed input ${id} is ACTIVE: stop the channel using it first`);
    await this.inputs.remove(organizationId, id);
  }
}
