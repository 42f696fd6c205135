/** The model catalog's pure side: schema, verification, snapshot types, id resolution. */
export * from "./types";
export * from "./schema";
export { catalogHash, formatHashFile, parseHashFile, verifyCatalog, type VerifyOptions } from "./verify";
export * from "./resolve";
export { editDistance, suggestModels, MAX_SUGGESTIONS, type SuggestOptions } from "./suggest";
