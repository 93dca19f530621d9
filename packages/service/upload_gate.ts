/**
 * Bounds the work uploads make. Each upload of a source hook compiles in its
 * own process (a Deno process with esbuild or the AssemblyScript compiler, up
 * to 120 s and a 1 GiB heap) and each plugin is instrumented and compiled on
 * the server, so without a bound one tenant sending uploads in parallel could
 * start as many compilers as it has connections and starve every tenant's
 * dispatches of CPU and memory. Two bounds:
 *
 * - per tenant, a few uploads at once (body read, build, store); the next ones
 *   wait in order, and past a short queue an upload is `429 QUOTA_EXCEEDED`;
 * - per server, a few builds at once whoever asks, first come first served,
 *   one tenant never holding all of them (the last is kept for another's: a
 *   tenant's compiles may each take two minutes), and a few unpackings (each a worker thread with its own heap: many tenants
 *   uploading at once must not start a thread each). A tenant has at most its
 *   own few uploads in those queues, so no tenant can push the others' back by
 *   more than those.
 *
 * @module
 */
import { ApiError } from "./errors.ts";

/** What {@linkcode UploadGate} lets through. */
export interface UploadLimits {
  /** Uploads of one tenant under way at once. @default 2 */
  perTenant: number;
  /** Uploads of one tenant that may wait for those (holding only a connection); past it `429`. @default 64 */
  waitingPerTenant: number;
  /**
   * Builds (compiles, plugin checks and test runs) under way at once in this
   * server; one tenant holds at most all but one of them. @default 2
   */
  builds: number;
  /**
   * Uploads being unpacked or parsed (each on a worker thread of its own) at
   * once in this server, whoever sent them. @default 4
   */
  unpacks: number;
}

/** The default {@linkcode UploadLimits}. */
export const DEFAULT_UPLOAD_LIMITS: Readonly<UploadLimits> = Object.freeze({
  perTenant: 2,
  waitingPerTenant: 64,
  builds: 2,
  unpacks: 4,
});

/** A counting semaphore whose waiters go in the order they came. */
class Slots {
  #free: number;
  #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Waiters not yet let in. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** True when no slot is taken and nobody waits. */
  idle(size: number): boolean {
    return this.#free === size && this.#waiting.length === 0;
  }

  /** Resolves with the slot's release once one is free. */
  async take(): Promise<() => void> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next(); // the slot passes straight on
      else this.#free++;
    };
  }
}

/** The service's bounds on uploads. */
export class UploadGate {
  readonly #limits: UploadLimits;
  readonly #tenants = new Map<string, Slots>();
  readonly #builds: Slots;
  readonly #tenantBuilds = new Map<string, Slots>();
  readonly #unpacks: Slots;

  /** A gate with `limits` (each at least 1). */
  constructor(limits: Partial<UploadLimits> = {}) {
    const all = { ...DEFAULT_UPLOAD_LIMITS, ...limits };
    for (const [name, value] of Object.entries(all)) {
      if (!Number.isInteger(value) || value < (name === "waitingPerTenant" ? 0 : 1)) {
        throw new RangeError(`upload limit ${name} must be a positive integer, got ${value}`);
      }
    }
    this.#limits = all;
    this.#builds = new Slots(all.builds);
    this.#unpacks = new Slots(all.unpacks);
  }

  /**
   * Waits for one of `tenant`'s upload slots; `429 QUOTA_EXCEEDED` when too
   * many of its uploads wait already. Call the returned release when done.
   */
  async admit(tenant: string): Promise<() => void> {
    let slots = this.#tenants.get(tenant);
    if (slots === undefined) this.#tenants.set(tenant, slots = new Slots(this.#limits.perTenant));
    if (slots.waiting >= this.#limits.waitingPerTenant) {
      throw new ApiError(
        429,
        "QUOTA_EXCEEDED",
        `over the tenant's quota of ${this.#limits.perTenant} uploads at once ` +
          `(and ${this.#limits.waitingPerTenant} waiting)`,
        { retryAfter: 1 },
      );
    }
    const release = await slots.take();
    return () => {
      release();
      // Forget tenants with nothing under way: the map holds only active ones.
      if (this.#tenants.get(tenant)?.idle(this.#limits.perTenant)) this.#tenants.delete(tenant);
    };
  }

  /**
   * Runs `work` in one of the server's build slots; `tenant`'s builds hold
   * at most all but one of them.
   */
  async build<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    const size = Math.max(1, this.#limits.builds - 1);
    let own = this.#tenantBuilds.get(tenant);
    if (own === undefined) this.#tenantBuilds.set(tenant, own = new Slots(size));
    const release = await own.take();
    try {
      return await inSlot(this.#builds, work);
    } finally {
      release();
      if (this.#tenantBuilds.get(tenant)?.idle(size)) this.#tenantBuilds.delete(tenant);
    }
  }

  /** Runs `work` (an upload's unpacking or parsing) in one of the server's unpack slots. */
  unpack<T>(work: () => Promise<T>): Promise<T> {
    return inSlot(this.#unpacks, work);
  }
}

/** `work` run once one of `slots` is free, the slot given back when it ends. */
async function inSlot<T>(slots: Slots, work: () => Promise<T>): Promise<T> {
  const release = await slots.take();
  try {
    return await work();
  } finally {
    release();
  }
}
