// The push fronts as the live runtime's front registry builds them (packager/ingest/front-registry.ts): from a
// channel's blueprint input, managed (its fixed port, key and CIDRs) or not (a fresh key, an ephemeral port and
// the input's inputSecurityGroups), always also behind the workflow's inputWhitelistCIDRs. Wiring, in the runtime:
//   for (const protocol of PUSH_PROTOCOLS) registry.register(protocol, pushFrontFactory(ctx));
// A managed input may leave `type` out of the blueprint: pushProtocolOf() reads it from the managed input.
import type { EngineContext } from '../../kernel/context.js';
import { isCidrBlock } from '../../kernel/core/cidr.js';
import { createPushIngestService, isPushProtocol, pushSpecOfManagedInput, type OpenedPushFront, type PushIngestSpec, type PushProtocol } from './push-ingest.js';

/** What a factory is handed (a structural subset of the registry's FrontRequest). */
export interface PushFrontRequest {
  spec: { workflowId: string; organizationId: string; inputWhitelistCIDRs: readonly string[] };
  input: Record<string, unknown> & { name: string; type?: string | undefined };
}

export class PushInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PushInputError';
  }
}

function managedInputId(input: PushFrontRequest['input']): string | undefined {
  return typeof input.managedInputId === 'string' ? input.managedInputId : undefined;
}

/** The engine's one push ingest service, made on first use. */
function pushIngest(ctx: EngineContext) {
  ctx.services.pushIngest ??= createPushIngestService(ctx);
  return ctx.services.pushIngest;
}

/** The push protocol of a blueprint input, read from its managed input when it names one; undefined for pull inputs. */
export async function pushProtocolOf(ctx: EngineContext, request: PushFrontRequest): Promise<PushProtocol | undefined> {
  const id = managedInputId(request.input);
  if (id) {
    const managed = await ctx.services.managedInputs?.get(request.spec.organizationId, id);
    return managed ? pushSpecOfManagedInput(managed.input)?.protocol : undefined;
  }
  const type = request.input.type;
  return type !== undefined && isPushProtocol(type) ? type : undefined;
}

async function specOf(ctx: EngineContext, request: PushFrontRequest): Promise<PushIngestSpec> {
  const { input, spec } = request;
  const common = { input: input.name, workflowId: spec.workflowId, alsoAllowedBy: [spec.inputWhitelistCIDRs.filter(isCidrBlock)] };
  const id = managedInputId(input);
  if (id) {
    const managed = await ctx.services.managedInputs?.get(spec.organizationId, id);
    if (!managed) throw new PushInputError(`input ${input.name}: managed input ${id} does not exist in this organization`);
    const fixed = pushSpecOfManagedInput(managed.input);
    if (!fixed) throw new PushInputError(`input ${input.name}: managed input ${id} is not a push input`);
    if (input.type !== undefined && input.type !== fixed.protocol && !(input.type === 'CONNECTED_DEVICE' && fixed.protocol === 'SRT_PUSH')) {
      throw new PushInputError(`input ${input.name}: the blueprint says ${input.type} but managed input ${id} is ${fixed.protocol}`);
    }
    return { ...common, ...fixed, cidrs: managed.input.cidrs };
  }
  const protocol = input.type;
  if (protocol === undefined || !isPushProtocol(protocol)) throw new PushInputError(`input ${input.name}: ${String(protocol)} is not a push protocol`);
  const groups = Array.isArray(input.inputSecurityGroups) ? input.inputSecurityGroups : [];
  return { ...common, protocol, cidrs: groups.filter((group): group is string => typeof group === 'string' && isCidrBlock(group)) };
}

/** A front-registry factory for every push protocol. */
export function pushFrontFactory(ctx: EngineContext): (request: PushFrontRequest) => Promise<OpenedPushFront> {
  return async (request) => pushIngest(ctx).open(await specOf(ctx, request));
}
