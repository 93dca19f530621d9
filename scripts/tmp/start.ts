import { startWorkerd } from "../../tests/_workerd.ts";
import { median } from "../_stats.ts";
const dir = Deno.args[0]!;
const xs = [];
for (let i = 0; i < 5; i++) { const t = performance.now(); const w = await startWorkerd(dir, {}, { pollMs: 2 }); xs.push(performance.now() - t); await w.stop(); }
console.log(dir, median(xs).toFixed(1));
