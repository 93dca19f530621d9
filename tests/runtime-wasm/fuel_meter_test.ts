/**
 * The host's fuel meter gathers host charges and takes them from the guest's
 * counter in batches: the fuel a call reports includes every charge at once,
 * the guest's counter drops once a batch is full, and a budget spent by host
 * charges alone is seen at the next check.
 */
import assert from "node:assert/strict";
import { CHARGE_BATCH, FUEL_SLICE, FuelMeter } from "../../packages/runtime-wasm/_fuel.ts";

function meter(budget: number) {
  const global = new WebAssembly.Global({ value: "i64", mutable: true }, 0n);
  const m = new FuelMeter();
  m.attach(global);
  m.start(budget);
  return { m, global };
}

Deno.test("host charges count at once and reach the guest's counter a batch at a time", () => {
  const { m, global } = meter(10 * FUEL_SLICE);
  assert.equal(global.value, BigInt(FUEL_SLICE));
  m.charge(100);
  assert.equal(m.used(), 100, "reported at once");
  assert.equal(global.value, BigInt(FUEL_SLICE), "not yet taken from the guest");
  m.charge(CHARGE_BATCH);
  assert.equal(global.value, BigInt(FUEL_SLICE - CHARGE_BATCH - 100), "a full batch is taken");
  assert.equal(m.used(), CHARGE_BATCH + 100);
  global.value = global.value - 50n; // the guest ran 50 units
  assert.equal(m.used(), CHARGE_BATCH + 150);
  assert.equal(m.spent(), false);
});

Deno.test("a budget spent by host charges is spent, in the last slice, before the batch fills", () => {
  const { m } = meter(1500);
  m.charge(1000);
  assert.equal(m.spent(), false);
  m.charge(600);
  assert.equal(m.used(), 1600);
  assert.equal(m.spent(), true);
  assert.equal(m.refill(), false, "no more fuel to hand out");
});

Deno.test("a refill settles the gathered charges into the fuel consumed", () => {
  const { m, global } = meter(3 * FUEL_SLICE);
  m.charge(300);
  global.value = -1n; // the guest spent its slice
  assert.equal(m.refill(), true);
  assert.equal(m.used(), FUEL_SLICE + 1 + 300);
  assert.equal(global.value, BigInt(FUEL_SLICE));
});
