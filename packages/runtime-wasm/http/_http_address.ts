/**
 * Where a granted host may not lead: loopback, private, link-local and other
 * internal addresses, checked on the addresses the host resolves to. Only a
 * host named exactly in the grant may reach one (a wildcard never does), so a
 * hook granted `*.example.com` cannot be pointed at the metadata service or a
 * loopback admin port by a DNS record. (A record could still change between
 * this check and the connection; that window is documented in SECURITY.md.)
 *
 * @module
 */

/** True for an IPv4 or IPv6 address that is loopback, private, link-local or otherwise internal. */
export function isInternalAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) return isInternalAddress(mapped[1]!);
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const [x, y] = [Number(v4[1]), Number(v4[2])];
    return x === 0 || x === 10 || x === 127 || (x === 169 && y === 254) ||
      (x === 172 && y >= 16 && y <= 31) || (x === 192 && y === 168) ||
      (x === 100 && y >= 64 && y <= 127) || x >= 224;
  }
  if (!a.includes(":")) return false;
  return a === "::" || a === "::1" || /^f[cd]/.test(a) || /^fe[89ab]/.test(a) || /^ff/.test(a);
}

/** Resolves `hostname` to its addresses (an address literal is its own); [] when unknown. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Deno's resolver when there is one (A and AAAA records); otherwise none. */
export const defaultResolver: Resolver = async (hostname) => {
  // Found at run time, so the core type-checks without Deno's types.
  type ResolveDns = (hostname: string, type: "A" | "AAAA") => Promise<string[]>;
  const deno = (globalThis as { Deno?: { resolveDns?: ResolveDns } }).Deno;
  if (deno?.resolveDns === undefined) return [];
  const lookups = await Promise.allSettled([
    deno.resolveDns(hostname, "A"),
    deno.resolveDns(hostname, "AAAA"),
  ]);
  return lookups.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
};

/** Why `hostname` may not be reached under `allowedHosts`, or null when it may. */
export async function addressRefusal(
  hostname: string,
  allowedHosts: readonly string[],
  resolve: Resolver = defaultResolver,
): Promise<string | null> {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (allowedHosts.some((p) => p.toLowerCase() === host)) return null;
  const literal = /^[\d.]+$/.test(host) || host.includes(":");
  const addresses = literal ? [host] : await resolve(host);
  const internal = addresses.find(isInternalAddress);
  if (internal === undefined) return null;
  return `denied: ${hostname} resolves to ${internal} (internal); only an exactly granted host may`;
}
