export type { ObjectStorage, StoredObject } from "./types";
export { LocalStorage } from "./local";
export { S3Storage, type S3StorageOptions } from "./s3";
