/**
 * The conformance run on plain Node (bundled by conformance_test.ts): reads
 * `<root>/cases.json`, runs it through the library with the Node file
 * system, prints the observations as one JSON document. A second argument
 * `share-code` runs it with one module for plugins that differ in data.
 */
import { readFile } from "node:fs/promises";
import process from "node:process";
import { nodeFs } from "../../packages/host-node/fs.ts";
import type { Case } from "./cases.ts";
import { runCases } from "./_run.ts";

const root = process.argv[2] ?? ".";
const cases = JSON.parse(await readFile(`${root}/cases.json`, "utf8")) as Case[];
const shareCode = process.argv[3] === "share-code";
process.stdout.write(JSON.stringify(await runCases(nodeFs, root, cases, { shareCode })));
