/**
 * Storage in a local directory (default: `<DATA_DIR>/files`). A write goes to a temporary
 * file first and is renamed into place, so a reader never sees half a file. Only one host
 * sees these files: several gateway instances need S3 (or one shared volume).
 */
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { checkKey, type ObjectStorage, type StoredObject } from "./types";

export class LocalStorage implements ObjectStorage {
  readonly kind = "local" as const;
  constructor(private root: string) {}

  private path(key: string): string {
    return join(this.root, checkKey(key));
  }

  async put(key: string, body: ReadableStream<Uint8Array>, _contentType: string): Promise<number> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.${process.pid}.${crypto.randomUUID().slice(0, 8)}.part`;
    try {
      const size = await Bun.write(tmp, new Response(body));
      await rename(tmp, path);
      return size;
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => {});
      throw e;
    }
  }

  async read(key: string, start: number, end: number): Promise<StoredObject | null> {
    const file = Bun.file(this.path(key));
    if (!(await file.exists())) return null;
    const slice = file.slice(start, end + 1);
    return { stream: () => slice.stream(), file: slice };
  }

  async exists(key: string): Promise<boolean> {
    return Bun.file(this.path(key)).exists();
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}
