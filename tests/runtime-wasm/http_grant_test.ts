/**
 * `allowed_hosts` is not self-granted: user and project hooks get only what
 * the operator's policy also grants, and no granted host may lead to a
 * loopback, private or link-local address unless it is named exactly.
 */
import assert from "node:assert/strict";
import { grantedHosts, resolvePolicy } from "../../packages/core/policy.ts";
import {
  addressRefusal,
  isInternalAddress,
} from "../../packages/runtime-wasm/http/_http_address.ts";
import { fakeHook } from "../_helpers.ts";

const hosts = ["api.example.com", "*.cdn.example.com", "localhost", "169.254.169.254"];

Deno.test("`grantedHosts()` narrows user and project hooks to the operator's list", () => {
  const policy = resolvePolicy({ allowedHosts: ["api.example.com", "*.example.com"] });
  for (const level of ["user", "project"] as const) {
    const hook = { ...fakeHook({ name: "h", allowed_hosts: hosts }), level };
    assert.deepEqual(grantedHosts(hook, policy), ["api.example.com", "*.cdn.example.com"]);
    assert.deepEqual(grantedHosts(hook, resolvePolicy()), [], "deny by default");
  }
  const platform = { ...fakeHook({ name: "p", allowed_hosts: hosts }), level: "platform" as const };
  assert.deepEqual(grantedHosts(platform, resolvePolicy()), hosts, "the operator wrote it");
});

Deno.test("`isInternalAddress()` knows loopback, private, link-local and mapped forms", () => {
  const internal = [
    "127.0.0.1",
    "10.1.2.3",
    "172.20.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "0.0.0.0",
    "100.64.0.1",
    "::1",
    "fd00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "[::1]",
  ];
  for (const a of internal) assert.ok(isInternalAddress(a), a);
  for (const a of ["93.184.216.34", "2606:4700::1111", "172.32.0.1"]) {
    assert.ok(!isInternalAddress(a), a);
  }
});

Deno.test("`addressRefusal()` refuses a wildcard-granted host that resolves inside", async () => {
  const rebinding = (host: string) =>
    Promise.resolve(host === "evil.example.com" ? ["127.0.0.1"] : ["93.184.216.34"]);
  const grant = ["*.example.com"];
  assert.match(await addressRefusal("evil.example.com", grant, rebinding) ?? "", /127\.0\.0\.1/);
  assert.equal(await addressRefusal("good.example.com", grant, rebinding), null);
  assert.match(await addressRefusal("169.254.169.254", grant, rebinding) ?? "", /internal/);
  assert.equal(
    await addressRefusal("localhost", ["localhost"], () => Promise.resolve(["127.0.0.1"])),
    null,
  );
});
