/**
 * Stands in for the service's tenant, hook, audit and replay routes in an
 * edge Worker (see `EDGE_ROUTES_ONLY`): the Worker mounts `POST /v1/events`
 * and `GET /healthz` only (SPEC §7), so the other groups declare no route
 * there and their code (uploads, archives, audit pages, replays) is not
 * compiled at every start.
 *
 * @module
 */

/** No routes. */
function none(_ctx: unknown): never[] {
  return [];
}

export { none as auditRoutes, none as hookRoutes, none as replayRoutes, none as tenantRoutes };
