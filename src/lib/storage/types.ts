/**
 * Object storage for generated files (Family G video results): a local directory by default,
 * S3-compatible object storage when configured. Keys are relative paths such as
 * `video/<job_id>.mp4`.
 */

/** Something that can stream its bytes (a Blob slice, local or S3). */
export interface StoredObject {
  stream(): ReadableStream<Uint8Array>;
  /**
   * A local file slice that may be sent as a response body as is (sendfile, exact length).
   * Never set for S3: Bun answers a Response over an S3 file with a redirect.
   */
  file?: Blob;
}

export interface ObjectStorage {
  readonly kind: "local" | "s3";
  /** Writes the whole body under `key` (replacing any object); returns its size in bytes. */
  put(key: string, body: ReadableStream<Uint8Array>, contentType: string): Promise<number>;
  /** Bytes `start`..`end` (inclusive) of the object; null when it does not exist. */
  read(key: string, start: number, end: number): Promise<StoredObject | null>;
  exists(key: string): Promise<boolean>;
  /** Deletes the object; a missing object is not an error. */
  delete(key: string): Promise<void>;
}

/** Keys are ours, but never let one climb out of its root. */
export function checkKey(key: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(key) || key.split("/").some((p) => p === ".." || p === "." || p === "")) {
    throw new Error(`invalid storage key: ${key}`);
  }
  return key;
}
