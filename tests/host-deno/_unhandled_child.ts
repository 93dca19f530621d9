/**
 * Run by unhandled_test.ts: with `--keep`, turns unhandled rejections into
 * log lines; then rejects a promise nobody handles and says whether it is
 * still running a moment later.
 */
import { logUnhandledRejections } from "../../packages/host-deno/unhandled.ts";

if (Deno.args.includes("--keep")) {
  logUnhandledRejections((entry) => console.log(JSON.stringify(entry)));
}
Promise.reject(new Error("a fault nobody handled"));
await new Promise((resolve) => setTimeout(resolve, 100));
console.log("still running");
