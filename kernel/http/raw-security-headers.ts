// The security header that counts on the raw hot paths served before Express (the /v1 proxy, the linear channel):
// they answer playlists, redirects and JSON only, so nosniff is the one (issue 20, defect 2). Each raw handler writes
// it in its own flat writeHead list: a header set earlier with setHeader would make every writeHead take node:http's
// slow path (each header set and validated again one by one).
export const RAW_SECURITY_HEADERS: readonly string[] = ['x-content-type-options', 'nosniff'];
