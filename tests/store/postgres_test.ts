import { openPostgresStore } from "../../src/store/postgres.ts";
import { freshDatabase } from "../_pg.ts";
import { storeSuite } from "./_suite.ts";

storeSuite("postgres", async () => openPostgresStore(await freshDatabase()));
