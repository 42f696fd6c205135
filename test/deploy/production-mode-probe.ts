/**
 * Probe for test/deploy/production-mode.test.ts: loads the gateway's production-mode module as
 * src/main.ts does (before Elysia), then refuses a body as a route's schema would and prints
 * whether Elysia's error built its development details: an example value of the schema
 * (`expected`) and the list of every error (`errors`).
 */
import "../../src/boot/production-mode";
import { ValidationError } from "elysia";
import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";

const schema = TypeCompiler.Compile(Type.Object({ messages: Type.Array(Type.String()) }));
const error = new ValidationError("body", schema as never, { messages: [1, 2, 3] });
const message = JSON.parse(error.message);
console.log(JSON.stringify({ detailed: "expected" in message || "errors" in message, env: process.env.ENV ?? null }));
