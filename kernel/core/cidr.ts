import ipaddr from 'ipaddr.js';

/**
 * A CIDR block for allow-lists (workflow inputWhitelistCIDRs, push input CIDRs): four-part dotted IPv4 only
 * (ipaddr.js also accepts "10.1/8" shorthands that encoders reject), or IPv6.
 */
export function isCidrBlock(value: string): boolean {
  return ipaddr.IPv4.isValidCIDRFourPartDecimal(value) || ipaddr.IPv6.isValidCIDR(value);
}
