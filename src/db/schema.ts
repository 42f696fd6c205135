/** Every table, for Drizzle and drizzle-kit. One file per table group under schema/. */
export * from "./schema/accounts";
export * from "./schema/keys";
export * from "./schema/ledger";
export * from "./schema/response-cache";
export * from "./schema/rollups";
export * from "./schema/policies";
export * from "./schema/video-jobs";
export * from "./schema/feedback";
export * from "./schema/stored-responses";
export * from "./schema/payments";
export * from "./schema/sessions";
