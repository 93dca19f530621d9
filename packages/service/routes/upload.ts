/**
 * Hook uploads: a folder (JSON or a gzip'd tar) in, a stored version out,
 * within the tenant's storage caps.
 *
 * @module
 */
import type { Context } from "hono";
import { sha256Hex } from "../../core/bytes.ts";
import type { ErrorCode } from "../../core/errors.ts";
import { HookRejected } from "../builder.ts";
import { ApiError, tenantNotFound } from "../errors.ts";
import { readFolder } from "../request.ts";
import {
  type HookRow,
  type NewHookVersion,
  PLATFORM,
  type TenantRow,
  VersionRefused,
} from "../../store/store.ts";
import type { ServiceContext } from "./context.ts";

/**
 * Refuses an upload that would take a tenant past its hook count or stored
 * bytes: before the build with the uploaded files (and the hook count),
 * after it with the plugin built from them too (`plugin`; the bytes only,
 * read again since the build may have taken a while).
 */
async function withinStorage(
  { store, storage }: ServiceContext,
  tenantId: string,
  name: string,
  uploaded: number,
  plugin?: number,
): Promise<void> {
  const refuse = (code: ErrorCode, message: string) =>
    new ApiError(422, "HOOK_REJECTED", `the hook was rejected: ${message}`, {
      problems: [{ code, path: name, field: null, message }],
    });
  const [hooks, stored] = await Promise.all([
    plugin === undefined ? store.listHooks(tenantId) : null,
    store.storedBytes(tenantId),
  ]);
  if (
    hooks !== null && !hooks.some((h) => h.name === name) &&
    hooks.length >= storage.hooksPerTenant
  ) {
    throw refuse(
      "HOOK_TOO_MANY",
      `the tenant has ${hooks.length} hooks, at most ${storage.hooksPerTenant}; delete one first`,
    );
  }
  if (stored + uploaded + (plugin ?? 0) > storage.bytesPerTenant) {
    throw refuse(
      "HOOK_FILE_TOO_LARGE",
      `the tenant's hooks hold ${stored} bytes; with this upload they would pass the ` +
        `${storage.bytesPerTenant}-byte quota; delete hooks first`,
    );
  }
}
/** A staged upload of a hook that has no active version is `404 HOOK_NOT_FOUND`. */
function notFound(err: unknown): void {
  if (err instanceof VersionRefused && err.code === "HOOK_NOT_FOUND") {
    throw new ApiError(404, "HOOK_NOT_FOUND", `${err.message}: upload it without ?stage=1 first`);
  }
}

/**
 * Stores a version; for a tenant, its storage caps and its existence are
 * checked in the same transaction (`NewHookVersion.caps`).
 */
async function addVersion(
  { store, storage }: ServiceContext,
  scope: string,
  name: string,
  tenant: TenantRow | null,
  version: NewHookVersion,
): Promise<HookRow> {
  if (tenant === null) {
    return await store.addHookVersion(scope, name, version).catch((err) => {
      notFound(err);
      throw err;
    });
  }
  const caps = {
    hooks: storage.hooksPerTenant,
    bytes: storage.bytesPerTenant,
    tenantCreatedAt: tenant.created_at,
  };
  try {
    return await store.addHookVersion(scope, name, { ...version, caps });
  } catch (err) {
    if (!(err instanceof VersionRefused)) throw err;
    if (err.code === "TENANT_GONE") throw tenantNotFound(tenant.id);
    notFound(err);
    throw new ApiError(422, "HOOK_REJECTED", `the hook was rejected: ${err.message}`, {
      problems: [{ code: err.code, path: name, field: null, message: err.message }],
    });
  }
}
/**
 * Stores an uploaded hook folder as a new version of hook `name` of `scope`
 * (a tenant, or the platform): admitted by the upload gate before its body is
 * read, unpacked off the request thread, built, checked against the tenant's
 * storage caps, stored.
 */
export async function upload(
  ctx: ServiceContext,
  c: Context,
  scope: string,
  name: string,
  tenant: TenantRow | null,
): Promise<Response> {
  const release = await ctx.uploads.admit(scope); // before the body: a waiting upload holds no memory
  try {
    return await uploadAdmitted(ctx, c, scope, name, tenant);
  } finally {
    release();
  }
}
async function uploadAdmitted(
  ctx: ServiceContext,
  c: Context,
  scope: string,
  name: string,
  tenant: TenantRow | null,
): Promise<Response> {
  const { store, builder, storage, uploads, iso } = ctx;
  // ?stage=1: stored beside the active version, not instead of it (test it, then roll back to it).
  const stage = ["1", "true"].includes(c.req.query("stage") ?? "");
  // Unpacked and parsed on worker threads, a few at once in the server (UploadGate.unpack).
  const { unpack, parseUpload } = builder;
  const files = await readFolder(
    c,
    unpack && ((archive) => uploads.unpack(() => unpack.call(builder, archive))),
    parseUpload && ((json) => uploads.unpack(() => parseUpload.call(builder, json))),
  );
  if (scope !== PLATFORM && (await store.getHook(PLATFORM, name))) {
    throw new ApiError(
      409,
      "HOOK_NAME_CONFLICT",
      `"${name}" is a platform hook; a tenant hook cannot replace it`,
    );
  }
  const uploaded = [...files.values()].reduce((n, bytes) => n + bytes.byteLength, 0);
  if (scope !== PLATFORM) await withinStorage(ctx, scope, name, uploaded);
  let built;
  try {
    built = await uploads.build(scope, () => builder.build(name, files));
  } catch (err) {
    if (err instanceof HookRejected) {
      const compile = err.problems.find((p) => p.code.startsWith("COMPILE"));
      const tests = err.problems.filter((p) => p.code === "HOOK_TEST_FAILED");
      const message = compile
        ? `the hook does not compile: ${compile.message}`
        : tests.length > 0
        ? `the hook's own tests fail (${tests.length}): ${tests[0]!.message}`
        : `the hook was rejected: ${err.problems[0]?.message ?? "invalid"}`;
      throw new ApiError(422, "HOOK_REJECTED", message, { problems: err.problems });
    }
    throw err;
  }
  const artefact = built.plugin ?? files.get("HOOK.md")!;
  const hash = builder.sha256?.bind(builder) ?? sha256Hex;
  const sha256 = await hash(artefact);
  await store.putBlob(sha256, artefact);
  // The sources too, content-addressed: tenants uploading the same file share it.
  const sources: Record<string, string> = {};
  for (const [path, bytes] of files) {
    sources[path] = await hash(bytes);
    await store.putBlob(sources[path], bytes);
  }
  const row = await addVersion(ctx, scope, name, tenant, {
    sha256,
    runtime: built.runtime,
    size_bytes: artefact.byteLength,
    manifest: built.manifest,
    body: built.body,
    built_from: built.builtFrom,
    sources,
    created_at: iso(),
    stored_bytes: artefact.byteLength + uploaded,
    ...(stage ? { stage } : {}),
  });
  await store.pruneVersions(scope, name, storage.versionsPerHook);
  return c.json({
    name,
    version: row.version,
    sha256,
    runtime: row.runtime,
    size_bytes: row.size_bytes,
    enabled: row.enabled,
    built_from: row.built_from,
    active: !stage,
  }, 201);
}
