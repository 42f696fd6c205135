// Files imported `with { type: "file" }` resolve to a path (embedded in a compiled binary).
declare module "@electric-sql/pglite/pglite.wasm" {
  const path: string;
  export default path;
}
declare module "@electric-sql/pglite/initdb.wasm" {
  const path: string;
  export default path;
}
declare module "@electric-sql/pglite/pglite.data" {
  const path: string;
  export default path;
}
declare module "*.tar.gz" {
  const path: string;
  export default path;
}
