/**
 * The Worker routes on the path it cuts out of `request.url` by hand; it
 * must be the path `URL` would give for every URL a runtime hands a Worker.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { pathOf } from "../../packages/edge/worker.ts";

Deno.test("pathOf gives URL's pathname for every normalised request URL", () => {
  const parts = [
    "",
    "v1",
    "events",
    "..",
    ".",
    "%2F",
    "a?b",
    "x#y",
    "?",
    "#",
    "héllo",
    "//",
    "a b",
  ];
  const hosts = ["edge", "127.0.0.1:8787", "user:pw@host", "[::1]:80", "xn--e1afmkfd.example"];
  let seed = 7;
  const pick = <T>(list: T[]): T =>
    list[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % list.length]!;
  let checked = 0;
  for (let i = 0; i < 5000; i++) {
    const path = Array.from({ length: 1 + (i % 5) }, () => pick(parts)).join(
      pick(["/", "", "?", "#"]),
    );
    const raw = `${pick(["http", "https"])}://${pick(hosts)}/${path}`;
    let url: string;
    try {
      url = new Request(raw).url;
    } catch {
      continue; // not a URL a Worker could be given
    }
    assertEquals(pathOf(url), new URL(url).pathname, url);
    checked++;
  }
  assertEquals(checked > 4000, true);
  assertEquals(pathOf("http://edge"), "/");
});
