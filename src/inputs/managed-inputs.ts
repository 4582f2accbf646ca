// The control plane's side of the managed-input seam (kernel/seams/managed-inputs.ts): reads an input and opens
// its sealed PULL password for the runtime that starts a channel.
import type { EngineContext } from '../../kernel/context.js';
import type { ManagedInputs } from '../../kernel/seams/managed-inputs.js';
import { InputStore } from './input.store.js';

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
