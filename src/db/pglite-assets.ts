/**
 * PGlite's WebAssembly and data bundle, imported as files so `bun build --compile` embeds them
 * in the single binary (where PGlite cannot find them on its own). Unchanged under `bun src/…`.
 */
import pgliteWasm from "@electric-sql/pglite/pglite.wasm" with { type: "file" };
import initdbWasm from "@electric-sql/pglite/initdb.wasm" with { type: "file" };
import pgliteData from "@electric-sql/pglite/pglite.data" with { type: "file" };

/** The files a PGlite data directory's format depends on (see pglite-template.ts). */
export const pgliteFiles = [pgliteWasm, initdbWasm, pgliteData];

let modules: Promise<{
  pgliteWasmModule: WebAssembly.Module;
  initdbWasmModule: WebAssembly.Module;
  fsBundle: Blob;
}> | null = null;

/** Only needed inside a compiled binary; elsewhere PGlite loads its own files. */
export function pgliteAssets() {
  if (!Bun.isStandaloneExecutable) return Promise.resolve({});
  modules ??= (async () => ({
    pgliteWasmModule: await WebAssembly.compile(await Bun.file(pgliteWasm).arrayBuffer()),
    initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbWasm).arrayBuffer()),
    fsBundle: Bun.file(pgliteData),
  }))();
  return modules;
}
