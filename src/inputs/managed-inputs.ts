// What other parts (channels, the packager) may know of managed inputs: the fixed ingest address to listen
// on at a channel start, and the source to pull with its credentials. Channels never allocate addresses.
import type { EngineContext } from '../../kernel/context.js';
import { InputStore, type ManagedInput } from './input.store.js';

export interface ManagedInputSource {
  input: ManagedInput;
  /** the PULL source password in clear, for the runtime that fetches the source; never sent to clients */
  password: string | undefined;
}

export interface ManagedInputs {
  /** undefined for an unknown id or another organization's input */
  get(organizationId: string, id: string): Promise<ManagedInputSource | undefined>;
}

declare module '../../kernel/context.js' {
  interface EngineServices {
    managedInputs?: ManagedInputs;
  }
}

export function createManagedInputs(ctx: EngineContext): ManagedInputs {
  const store = new InputStore(ctx.store.db);
  return {
    async get(organizationId, id) {
      const input = await store.get(organizationId, id);
      if (!input) return undefined;
      const sealed = input.hasPassword ? await store.sealedPassword(organizationId, id) : undefined;
      return { input, password: sealed === undefined ? undefined : ctx.vault.decrypt(sealed) };
    },
  };
}
