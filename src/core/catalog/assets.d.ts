// `import p from "./catalog.sha256" with { type: "file" }` gives the file's path (embedded in
// a compiled binary). tsc needs to know the module exists.
declare module "*.sha256" {
  const path: string;
  export default path;
}
