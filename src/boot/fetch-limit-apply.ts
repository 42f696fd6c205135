/** Imported first by src/main.ts so the fetch limit is in force before any other module runs. */
import { applyFetchLimit } from "./fetch-limit";

applyFetchLimit();
