import { openPostgresStore } from "../../src/store/postgres.ts";
import { freshDatabase } from "../_pg.ts";
import { apiSuite } from "./_api_suite.ts";

apiSuite("postgres", async () => openPostgresStore(await freshDatabase()));
