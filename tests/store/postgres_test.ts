import { openPostgresStore } from "../../packages/store-postgres/postgres.ts";
import { freshDatabase } from "../_pg.ts";
import { storeSuite } from "./_suite.ts";

storeSuite("postgres", async () => openPostgresStore(await freshDatabase()));
