// Who sees a broker channel (issue 15): the access lists apply to ID-token readers; admins and API keys see every channel.
import type { Principal } from '../../kernel/http/principal.js';
import { findUserById } from '../organizations/organization.store.js';
import type { Db } from '../../kernel/store/database.js';
import type { BrokerChannel } from './broker-channel.schema.js';

export interface ChannelReader {
  /** admins and API keys: the lists do not apply */
  unrestricted: boolean;
  userId?: string;
  roleGuid?: string;
}

export async function channelReader(db: Db, principal: Principal): Promise<ChannelReader> {
  if (principal.scheme === 'apiKey' || principal.permissions.includes('admin') || !principal.userId) return { unrestricted: true };
  const user = await findUserById(db, principal.userId);
  return { unrestricted: false, userId: principal.userId, ...(user ? { roleGuid: user.role.guid } : {}) };
}

/**
 * restrictedFor always hides; when allowedForUsers or allowedForRoles name anyone, only they see the channel;
 * with neither list every reader of the organization does.
 */
export function canSee(channel: BrokerChannel, reader: ChannelReader): boolean {
  if (reader.unrestricted) return true;
  if (reader.userId && channel.restrictedFor.includes(reader.userId)) return false;
  if (channel.allowedForUsers.length === 0 && channel.allowedForRoles.length === 0) return true;
  return (reader.userId !== undefined && channel.allowedForUsers.includes(reader.userId))
    || (reader.roleGuid !== undefined && channel.allowedForRoles.includes(reader.roleGuid));
}
