// `import p from "…" with { type: "file" }` gives the file's path (embedded in a compiled
// binary); tsc needs to know these modules exist and what they export.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
