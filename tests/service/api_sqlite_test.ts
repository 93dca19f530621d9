import { openSqliteStore } from "../../packages/store-sqlite/sqlite.ts";
import { apiSuite } from "./_api_suite.ts";
import { tempDir } from "../_helpers.ts";

apiSuite("sqlite", async () => {
  const dir = await tempDir("hookbox-api-");
  return openSqliteStore(`${dir}/hookbox.db`);
});
