import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { apiSuite } from "./_api_suite.ts";

apiSuite("sqlite", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hookbox-api-" });
  return openSqliteStore(`${dir}/hookbox.db`);
});
