/**
 * Bun reads BUN_CONFIG_MAX_HTTP_REQUESTS (its limit on simultaneous outgoing fetches, 256 by
 * default; past it fetches queue silently) once, when the process starts: setting it in
 * `process.env` later changes nothing (measured). So when it is unset, the process replaces
 * itself (execve: same PID, same arguments, same signals) with the schema's default added to
 * its environment. Imported first by src/main.ts, before any fetch. Where execve is not at
 * hand (Windows, an unknown C library), the gateway runs on with Bun's default and says so.
 */
import { dlopen, FFIType, ptr } from "bun:ffi";
import { EnvSchema } from "../config/schema";

const FETCH_LIMIT_VAR = "BUN_CONFIG_MAX_HTTP_REQUESTS";
const DEFAULT_FETCH_LIMIT = String(EnvSchema.properties.BUN_CONFIG_MAX_HTTP_REQUESTS.default);

/** The C libraries that may provide execve: glibc, musl (Alpine), macOS. */
const LIBC =
  process.platform === "darwin"
    ? ["libSystem.B.dylib"]
    : process.platform === "win32"
      ? []
      : ["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`];

/** The operating-system argv of this process (a compiled binary hides its own entry path). */
function osArgv(): string[] {
  const compiled = Bun.main.startsWith("/$bunfs/") || Bun.main.startsWith("B:/~BUN/");
  return compiled
    ? [process.execPath, ...process.argv.slice(2)]
    : [process.execPath, ...process.execArgv, process.argv[1]!, ...process.argv.slice(2)];
}

export function applyFetchLimit(env: NodeJS.ProcessEnv = process.env): void {
  if (env[FETCH_LIMIT_VAR]) return;
  const next = { ...env, [FETCH_LIMIT_VAR]: DEFAULT_FETCH_LIMIT };
  const keep: Buffer[] = [];
  const cstr = (s: string) => {
    const b = Buffer.from(s + "\0");
    keep.push(b);
    return BigInt(ptr(b));
  };
  const table = (xs: string[]) => {
    const a = new BigUint64Array(xs.length + 1); // NULL-terminated
    xs.forEach((x, i) => (a[i] = cstr(x)));
    return a;
  };
  const argv = table(osArgv());
  const envp = table(Object.entries(next).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`])));
  for (const lib of LIBC) {
    try {
      const libc = dlopen(lib, { execve: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 } });
      libc.symbols.execve(cstr(process.execPath), ptr(argv), ptr(envp));
      break; // only a failed execve returns
    } catch {} // no such library here: try the next
  }
  console.error(
    `${FETCH_LIMIT_VAR} could not be applied to this process, so Bun's default of 256 simultaneous fetches stays in force; set it in the environment.`,
  );
  process.env[FETCH_LIMIT_VAR] = "256"; // the config then sizes the upstream budget to what is real
}
