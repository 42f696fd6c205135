/**
 * How much memory the embedded PostgreSQL may take. PGlite allocates PostgreSQL's shared
 * memory inside its WebAssembly heap and writes it all at start, so `shared_buffers` is
 * resident from the first second: at PGlite's default of 128 MB it is the largest part of
 * the gateway's steady RSS. 16 MB (2,048 pages) caches the whole database of a demo or a
 * small deployment; pages beyond it are read from the data directory through the OS cache.
 * A command-line setting wins over postgresql.conf, so existing data directories get it too.
 */
import { PGlite } from "@electric-sql/pglite";

const PGLITE_SHARED_BUFFERS = "16MB";

export const pgliteMemory = {
  startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
  // The same value written into a new data directory's postgresql.conf by initdb.
  initDbStartParams: ["--set", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
};
