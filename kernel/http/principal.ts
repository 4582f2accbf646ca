export const PERMISSIONS = ['read', 'write', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Who is calling: resolved from an ID token or an API key; every query is scoped to organizationId. */
export interface Principal {
  organizationId: string;
  /** the user behind an ID token; undefined for API keys */
  userId: string | undefined;
  role: string;
  permissions: readonly Permission[];
  scheme: 'idToken' | 'apiKey';
  /** the API key's id when scheme is apiKey */
  apiKeyId?: string;
}

/** The organization that scopes every query of a route; routes whose auth is not 'none' always have a principal. */
export function org(principal: Principal | undefined): string {
  if (!principal) throw new Error('route without principal');
  return principal.organizationId;
}

export function hasPermission(principal: Principal, permission: Permission): boolean {
  return principal.permissions.includes(permission);
}
