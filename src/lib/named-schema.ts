/**
 * A name for a wire schema: the OpenAPI document lists a named schema once, as
 * `#/components/schemas/<name>`, and references it wherever it appears. Kept apart from the
 * document so the surfaces, which declare their bodies' schemas, can name them without
 * depending on the HTTP layer.
 */
const names = new WeakMap<object, string>();

/** Registers a schema as `#/components/schemas/<name>`: the document references it by name. */
export function named<T extends object>(name: string, schema: T): T {
  names.set(schema, name);
  return schema;
}

export const schemaName = (schema: unknown): string | undefined =>
  schema && typeof schema === "object" ? names.get(schema) : undefined;
