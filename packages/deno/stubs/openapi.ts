/**
 * Stands in for `service/openapi.ts` in an edge Worker (see `NO_OPENAPI`):
 * it serves only `POST /v1/events` and `GET /healthz`.
 *
 * @module
 */
/** Not in an edge Worker. */
export function openApiDocument(): never {
  throw new Error("an edge Worker does not serve the OpenAPI document; the hookbox service does");
}
