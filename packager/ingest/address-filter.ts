// Who may push (spec 2.4: "PUSH protocols accept a list of CIDR blocks that restrict who may push"): checked
// by the fronts before a byte reaches ffmpeg, since ffmpeg's own listeners check no address.
import ipaddr from 'ipaddr.js';

export type AddressFilter = (address: string) => boolean;

/**
 * An allow-list from CIDR blocks; an empty list lets anyone push (the spec makes the list optional).
 * IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`, what a dual-stack socket reports) match IPv4 blocks.
 */
export function addressFilter(cidrs: readonly string[]): AddressFilter {
  if (cidrs.length === 0) return () => true;
  const ranges = cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  };
}

/** A sender must be admitted by every non-empty list (the input's own CIDRs and the workflow's allow-list). */
export function allListsFilter(lists: readonly (readonly string[])[]): AddressFilter {
  const filters = lists.filter((list) => list.length > 0).map((list) => addressFilter(list));
  return (address) => filters.every((allows) => allows(address));
}

/** `::ffff:1.2.3.4` → `1.2.3.4`, for logs and events. */
export function plainAddress(address: string | undefined): string | undefined {
  return address?.startsWith('::ffff:') ? address.slice(7) : address;
}
