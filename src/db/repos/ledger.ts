/**
 * The process's ledger on the gateway's database: the SQL statements (ledger-store.ts) under
 * the layers of src/core/billing/compose.ts. Batching pays only over a PostgreSQL pool, and
 * credit leases run only there. docs/ledger.md tells what each layer does and why.
 */
import type { Database } from "../client";
import { BATCHING } from "../../core/billing/batching";
import { ComposedLedger } from "../../core/billing/compose";
import { NO_HOOKS, type LedgerHooks } from "../../core/billing/store-ledger";
import { SqlLeaseStore, SqlLedgerStore, type LedgerCommit } from "./ledger-store";

export { eventJson, type LedgerCommit } from "./ledger-store";

export interface SqlLedgerOptions {
  /** LEDGER_COMMIT (default durable). */
  commit?: LedgerCommit;
  /** LEDGER_LEASES: credit leases for busy keys (PostgreSQL only). */
  leases?: boolean;
  hooks?: Partial<LedgerHooks>;
  /** Asks every instance to retire its leases of an account (the invalidation bus). */
  retireElsewhere?(userId: string): Promise<void>;
}

export class SqlLedger extends ComposedLedger {
  constructor(db: Database, options: SqlLedgerOptions = {}) {
    const postgres = db.kind === "postgres";
    super(new SqlLedgerStore(db, options.commit), new SqlLeaseStore(db, options.commit), {
      batching: postgres ? BATCHING : false,
      leases: postgres && options.leases === true,
      hooks: { ...NO_HOOKS, ...options.hooks },
      retireElsewhere: options.retireElsewhere,
    });
  }
}
