/**
 * CSV of activity rows. Strings a spreadsheet would run as a formula (`=`, `+`, `-`, `@`
 * first: an app name comes from any client's X-Title) get a leading apostrophe.
 */
const CSV_COLUMNS = [
  "created_at",
  "request_id",
  "key_id",
  "model",
  "provider",
  "app",
  "api",
  "status",
  "error_code",
  "streamed",
  "prompt_tokens",
  "completion_tokens",
  "cached_tokens",
  "cost_krw",
  "cost_usd",
  "latency_ms",
  "ttft_ms",
  "cache_hit",
] as const;

function cell(v: unknown): string {
  if (v === null || v === undefined) return "";
  let s = String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(rows: Record<string, unknown>[]): string {
  return (
    [CSV_COLUMNS.join(","), ...rows.map((r) => CSV_COLUMNS.map((c) => cell(r[c])).join(","))].join("\r\n") + "\r\n"
  );
}

export function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
