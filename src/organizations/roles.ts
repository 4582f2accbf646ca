import type { Permission } from '../../kernel/http/principal.js';

/** The built-in roles of every organization; a viewer cannot write, only an admin manages users and keys. */
export const BUILT_IN_ROLES: ReadonlyArray<{ name: string; permissions: readonly Permission[]; description: string }> = [
  { name: 'admin', permissions: ['read', 'write', 'admin'], description: 'everything, including users and API keys' },
  { name: 'editor', permissions: ['read', 'write'], description: 'reads and changes resources' },
  { name: 'viewer', permissions: ['read'], description: 'reads resources' },
];
