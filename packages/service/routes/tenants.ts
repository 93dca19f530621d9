/**
 * Tenants and their keys (admin key only).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { hashKey, newId, newKey } from "../auth.ts";
import { ApiError, tenantNotFound } from "../errors.ts";
import { MAX_SMALL_BODY, param, readJson, validate } from "../request.ts";
import { serverSchemas } from "../schemas.ts";
import type { TenantRow } from "../../store/store.ts";
import type { ServiceContext } from "./context.ts";
import type { Route } from "./route.ts";
import { auditPage } from "./audit.ts";

/** The routes of `/v1/tenants`. */
export function tenantRoutes({ store, iso }: ServiceContext): Route[] {
  const tenantId = (c: Parameters<Route["handler"]>[0]) => param(c, "id", serverSchemas().idSchema);
  return [
    {
      method: "post",
      path: "/v1/tenants",
      who: "admin",
      docs: (s) => ({
        summary: "Create a tenant",
        body: s.tenantCreateSchema,
        ok: { status: 201, schema: s.tenantSchema },
        extra: { 409: "TENANT_EXISTS" },
      }),
      handler: async (c) => {
        const body = validate(
          serverSchemas().tenantCreateSchema,
          await readJson(c, MAX_SMALL_BODY),
        );
        const row: TenantRow = { id: body.id, policy: body.policy ?? {}, created_at: iso() };
        if (!(await store.createTenant(row))) {
          throw new ApiError(409, "TENANT_EXISTS", `tenant "${body.id}" already exists`);
        }
        return c.json(row, 201);
      },
    },
    {
      method: "get",
      path: "/v1/tenants",
      who: "admin",
      docs: (s) => ({
        summary: "List tenants",
        ok: { status: 200, schema: z.object({ items: z.array(s.tenantSchema) }) },
      }),
      handler: async (c) => c.json({ items: await store.listTenants() }),
    },
    {
      method: "get",
      path: "/v1/tenants/{id}",
      who: "admin",
      docs: (s) => ({
        summary: "One tenant",
        params: { id: s.idSchema },
        ok: { status: 200, schema: s.tenantSchema },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        const tenant = await store.getTenant(id);
        if (!tenant) throw tenantNotFound(id);
        return c.json(tenant);
      },
    },
    {
      method: "delete",
      path: "/v1/tenants/{id}",
      who: "admin",
      docs: (s) => ({
        summary: "Delete a tenant with its hooks, keys and audit",
        params: { id: s.idSchema },
        ok: { status: 204 },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        if (!(await store.deleteTenant(id))) throw tenantNotFound(id);
        return c.body(null, 204);
      },
    },
    {
      method: "put",
      path: "/v1/tenants/{id}/policy",
      who: "admin",
      docs: (s) => ({
        summary: "Replace a tenant's policy (fields not sent are removed; PATCH changes some)",
        params: { id: s.idSchema },
        body: s.policySchema,
        ok: { status: 200, schema: s.policySchema },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        const policy = validate(serverSchemas().policySchema, await readJson(c, MAX_SMALL_BODY));
        if (!(await store.setPolicy(id, policy))) throw tenantNotFound(id);
        return c.json(policy);
      },
    },
    {
      method: "patch",
      path: "/v1/tenants/{id}/policy",
      who: "admin",
      docs: (s) => ({
        summary: "Change some fields of a tenant's policy (JSON merge patch: null removes a field)",
        params: { id: s.idSchema },
        body: s.policyPatchSchema,
        ok: { status: 200, schema: s.policySchema },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        const patch = validate(
          serverSchemas().policyPatchSchema,
          await readJson(c, MAX_SMALL_BODY),
        );
        const tenant = await store.getTenant(id);
        if (!tenant) throw tenantNotFound(id);
        const merged: Record<string, unknown> = { ...tenant.policy };
        for (const [field, value] of Object.entries(patch)) {
          if (value === null) delete merged[field];
          else if (value !== undefined) merged[field] = value;
        }
        const policy = validate(serverSchemas().policySchema, merged);
        if (!(await store.setPolicy(id, policy))) throw tenantNotFound(id);
        return c.json(policy);
      },
    },
    {
      method: "get",
      path: "/v1/tenants/{id}/keys",
      who: "admin",
      docs: (s) => ({
        summary: "A tenant's keys, live and revoked (never the keys themselves)",
        params: { id: s.idSchema },
        ok: { status: 200, schema: z.object({ items: z.array(s.keyInfoSchema) }) },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        if (!(await store.getTenant(id))) throw tenantNotFound(id);
        return c.json({ items: await store.listKeys(id) });
      },
    },
    {
      method: "get",
      path: "/v1/tenants/{id}/audit",
      who: "admin",
      docs: (s) => ({
        summary: "A tenant's audit, read by the operator (the same filters and pages as /v1/audit)",
        params: { id: s.idSchema },
        query: s.auditQuerySchema,
        ok: { status: 200, schema: s.auditPageSchema },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        if (!(await store.getTenant(id))) throw tenantNotFound(id);
        return await auditPage(store, c, id);
      },
    },
    {
      method: "post",
      path: "/v1/tenants/{id}/keys",
      who: "admin",
      docs: (s) => ({
        summary: "Create a tenant key (shown once)",
        params: { id: s.idSchema },
        body: s.keyCreateSchema,
        ok: { status: 201, schema: s.keyCreatedSchema },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        const body = validate(
          serverSchemas().keyCreateSchema,
          await readJson(c, MAX_SMALL_BODY, true),
        );
        if (!(await store.getTenant(id))) throw tenantNotFound(id);
        const key = newKey();
        const keyId = newId("key");
        await store.createKey({
          id: keyId,
          tenant_id: id,
          name: body.name ?? null,
          hash: await hashKey(key),
          created_at: iso(),
        });
        return c.json({ id: keyId, key }, 201);
      },
    },
    {
      method: "delete",
      path: "/v1/tenants/{id}/keys/{key_id}",
      who: "admin",
      docs: (s) => ({
        summary: "Revoke a key",
        params: { id: s.idSchema, key_id: z.string() },
        ok: { status: 204 },
      }),
      handler: async (c) => {
        const id = tenantId(c);
        if (!(await store.revokeKey(id, c.req.param("key_id") ?? ""))) {
          throw new ApiError(404, "KEY_NOT_FOUND", "no such live key for this tenant");
        }
        return c.body(null, 204);
      },
    },
  ];
}
