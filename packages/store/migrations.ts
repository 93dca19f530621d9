/**
 * Schema migrations whose SQL both stores run as written. The tables differ
 * by dialect (JSONB or TEXT, BYTEA or BLOB, BIGSERIAL or AUTOINCREMENT), so
 * each store keeps its own list of those; what is the same in both — the
 * indexes — is written once, here, and each store's list takes it in order.
 *
 * @module
 */

/**
 * The blob sweep finds its candidates here: `stored_at` sits after the bytes
 * in a blob's row, and reading it from the table walks every plugin's pages.
 */
export const BLOBS_STORED_INDEX = "CREATE INDEX blobs_stored ON blobs (stored_at, sha256);";

/**
 * Heads of hook versions without reading their manifests and bodies (which
 * sit before `created_at` in the row): after an upload anywhere, each
 * tenant's hook list is read again, and only changed versions in full.
 */
export const HOOK_VERSIONS_HEAD_INDEX =
  "CREATE INDEX hook_versions_head ON hook_versions (tenant_id, name, version, sha256, created_at);";

/** A tenant's captured events are read oldest first from a point in time or a cursor. */
export const CAPTURES_TENANT_INDEX = "CREATE INDEX captures_tenant ON captures (tenant_id, seq);";

/** A hook's shadow runs are counted and paged by hook. */
export const SHADOW_RUNS_HOOK_INDEX =
  "CREATE INDEX shadow_runs_hook ON shadow_runs (tenant_id, name, seq);";

/**
 * The parts of blobs over `BLOB_PART_BYTES` (a blob's row then holds no bytes
 * and counts its parts); the sweep finds parts whose blob is gone by time.
 */
export const BLOB_PARTS_STORED_INDEX =
  "CREATE INDEX blob_parts_stored ON blob_parts (stored_at, sha256);";

/**
 * A hook listing reads each active version's trigger and priority from this
 * index alone: from the rows, SQLite walks every manifest's and body's pages
 * first, and PostgreSQL decompresses every manifest (500 of 16 KiB held its
 * backend ~20 ms a listing, on the same two cores as everything else).
 */
export const HOOK_VERSIONS_ITEM_INDEX =
  "CREATE INDEX hook_versions_item ON hook_versions (tenant_id, name, version, sha256, triggers, priority);";
