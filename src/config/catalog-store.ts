/**
 * The catalog as the running gateway sees it: the last snapshot that passed verification.
 * Reads `src/core/catalog/catalog.json` and its `catalog.sha256` (both embedded when the gateway is
 * compiled into one binary), or the files named by `CATALOG_PATH` / `CATALOG_HASH_PATH`.
 * A reload that fails verification keeps serving the previous snapshot.
 */
import { readFileSync } from "node:fs";
import { GatewayError } from "../core/errors";
import { formatProblem, type CatalogProblem, type CatalogSnapshot } from "../core/catalog/types";
import { verifyCatalog } from "../core/catalog/verify";
// `type: "file"` yields a path (in a compiled binary, an embedded `/$bunfs/...` file), so
// reload re-reads the live file in development and the shipped one in the binary.
import shippedCatalog from "../core/catalog/catalog.json" with { type: "file" };
import shippedHash from "../core/catalog/catalog.sha256" with { type: "file" };

/** The shipped catalog file and its hash file. */
export const SHIPPED_CATALOG_PATH = shippedCatalog as unknown as string;
const SHIPPED_HASH_PATH = shippedHash;

export interface CatalogStoreOptions {
  /** Catalog file. Default: `env.CATALOG_PATH`, else the shipped `src/core/catalog/catalog.json`. */
  path?: string;
  /**
   * Hash file (`sha256sum` format). Default: `env.CATALOG_HASH_PATH`, else the catalog path
   * with `.json` replaced by `.sha256` (the shipped `catalog.sha256` for the shipped file).
   */
  hashPath?: string;
  /** An expected hash given directly; overrides `hashPath`. */
  expectedHash?: string;
  /** Environment to read `CATALOG_PATH` / `CATALOG_HASH_PATH` from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Clock for the snapshot's `loadedAt`. */
  now?: () => Date;
  /** Load at construction (default true). */
  loadNow?: boolean;
}

export interface ReloadResult {
  ok: boolean;
  errors: readonly CatalogProblem[];
}

export class CatalogStore {
  readonly path: string;
  readonly hashPath: string;
  private snapshot: CatalogSnapshot | null = null;
  private errors: readonly CatalogProblem[] = [];

  constructor(private readonly options: CatalogStoreOptions = {}) {
    const env = options.env ?? process.env;
    const custom = options.path ?? env.CATALOG_PATH;
    this.path = custom ?? SHIPPED_CATALOG_PATH;
    this.hashPath =
      options.hashPath ??
      env.CATALOG_HASH_PATH ??
      (custom === undefined ? SHIPPED_HASH_PATH : custom.replace(/\.json$/i, "") + ".sha256");
    if (options.loadNow ?? true) this.reload();
  }

  /** The current verified snapshot. Throws `catalog_snapshot_stale` (503) when there is none. */
  current(): CatalogSnapshot {
    if (!this.snapshot) throw new GatewayError("catalog_snapshot_stale");
    return this.snapshot;
  }

  /** The current snapshot or null (for readiness checks). */
  peek(): CatalogSnapshot | null {
    return this.snapshot;
  }

  /** Problems of the last failed load or reload (empty after a good one). */
  lastErrors(): readonly CatalogProblem[] {
    return this.errors;
  }

  /**
   * Reads and verifies the files. On success the new snapshot replaces the old one; on
   * failure the old one (if any) stays and the problems are returned.
   */
  reload(): ReloadResult {
    const problems: CatalogProblem[] = [];
    const text = readText(this.path, problems);
    let expected = this.options.expectedHash;
    if (expected === undefined) {
      const hashText = readText(this.hashPath, problems, "hash");
      // An unreadable hash file is already a problem; still verify the rest.
      if (hashText !== null) expected = hashText;
    }
    if (text !== null) {
      const result = verifyCatalog(text, expected, { now: this.options.now?.() });
      if (result.ok && problems.length === 0) {
        this.snapshot = result.snapshot;
        this.errors = [];
        return { ok: true, errors: [] };
      }
      problems.push(...result.errors);
    }
    this.errors = problems;
    return { ok: false, errors: problems };
  }

  /** One line per problem, for logs. */
  describeErrors(): string {
    return this.errors.map(formatProblem).join("\n");
  }
}

function readText(path: string, problems: CatalogProblem[], kind: "io" | "hash" = "io"): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    problems.push({ kind, path, message: `cannot read ${path}: ${(e as Error).message}` });
    return null;
  }
}
