import { openSqliteStore } from "../../src/store/sqlite.ts";
import { storeSuite } from "./_suite.ts";

storeSuite("sqlite", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-sqlite-" });
  return openSqliteStore(`${dir}/hookbox.db`);
});
