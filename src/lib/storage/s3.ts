/**
 * S3-compatible object storage through Bun's native S3 client (AWS S3, R2, MinIO, ...).
 * Unset options fall back to Bun's own `S3_*` / `AWS_*` environment variables. Ranged reads
 * are ranged GETs (`slice`), so a 206 never downloads the whole object.
 */
import { S3Client } from "bun";
import { checkKey, type ObjectStorage, type StoredObject } from "./types";

export interface S3StorageOptions {
  bucket?: string;
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Prepended to every key, e.g. `gateway/`. */
  prefix?: string;
}

export class S3Storage implements ObjectStorage {
  readonly kind = "s3" as const;
  private client: S3Client;
  private prefix: string;

  constructor(options: S3StorageOptions) {
    this.client = new S3Client({
      ...(options.bucket && { bucket: options.bucket }),
      ...(options.endpoint && { endpoint: options.endpoint }),
      ...(options.region && { region: options.region }),
      ...(options.accessKeyId && { accessKeyId: options.accessKeyId }),
      ...(options.secretAccessKey && { secretAccessKey: options.secretAccessKey }),
    });
    this.prefix = options.prefix ?? "";
  }

  private file(key: string) {
    return this.client.file(this.prefix + checkKey(key));
  }

  async put(key: string, body: ReadableStream<Uint8Array>, contentType: string): Promise<number> {
    return this.file(key).write(new Response(body), { type: contentType });
  }

  async read(key: string, start: number, end: number): Promise<StoredObject | null> {
    const f = this.file(key);
    if (!(await f.exists())) return null;
    const slice = f.slice(start, end + 1);
    return { stream: () => slice.stream() };
  }

  async exists(key: string): Promise<boolean> {
    return this.file(key).exists();
  }

  async delete(key: string): Promise<void> {
    try {
      await this.file(key).delete();
    } catch (e) {
      if ((e as { code?: string }).code !== "NoSuchKey") throw e;
    }
  }
}
