/**
 * Vendor answers are checked, not cast: each adapter describes the fields it reads of a
 * non-streaming answer as a TypeBox schema, compiled once when its module loads. An answer
 * that fails is an upstream failure (`badAnswer`: transient, so retried and fallen back like a
 * 5xx, and never charged), named by the provider and the first failing path. Stream chunks
 * are not checked: the per-chunk parsers stay as lean as they are.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { badAnswer } from "./errors";

/** Checks one answer and returns it typed, or throws the provider's UpstreamError. */
export type WireCheck<T> = (body: unknown, provider: string) => T;

/** Compiles `schema` (call it at module level) into the check of one kind of answer (`what`). */
export function wireCheck<S extends TSchema>(what: string, schema: S): WireCheck<Static<S>> {
  const compiled = TypeCompiler.Compile(schema);
  return (body, provider) => {
    if (compiled.Check(body)) return body;
    const first = compiled.Errors(body).First();
    throw badAnswer(
      `${provider} sent a ${what} that fails its wire check at ${first?.path || "/"}: ${first?.message ?? "invalid"}`,
      200,
      body,
    );
  };
}

/** A field that may be absent or null, as vendors send "nothing" either way. */
export const Maybe = <S extends TSchema>(schema: S) => Type.Optional(Type.Union([schema, Type.Null()]));

/** A token count or similar: a number, when present. */
export const Count = Maybe(Type.Number());
