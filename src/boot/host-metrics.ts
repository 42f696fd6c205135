/**
 * `/metrics` for the whole host when several gateway processes share a port (src/boot/processes.ts;
 * docs/scaling.md, "One host, several processes"). A scrape lands on one process; that process
 * asks the supervisor over the IPC channel, the supervisor asks every process for its own text,
 * and answers the merge: each metric family once, each series with a `process` label (the
 * process's index, 0 to N−1). Counters and histograms add up with `sum without (process)`;
 * gauges read from the database (the video queue) are the same in every process.
 */

/** The messages between a gateway process and its supervisor. */
export type HostMessage =
  | { t: "metrics?"; id: number } // process → supervisor: the host's text, please
  | { t: "metrics!"; id: number } // supervisor → process: your own text, please
  | { t: "metrics"; id: number; text: string } // process → supervisor: my own text
  | { t: "metrics="; id: number; text: string }; // supervisor → process: the host's text

/** `name{labels} value` or `name value`, with `process="index"` added first among the labels. */
function labelled(line: string, index: number): string {
  const brace = line.indexOf("{");
  const space = line.indexOf(" ");
  if (brace >= 0 && (space < 0 || brace < space))
    return `${line.slice(0, brace + 1)}process="${index}"${line[brace + 1] === "}" ? "" : ","}${line.slice(brace + 1)}`;
  return `${line.slice(0, space)}{process="${index}"}${line.slice(space)}`;
}

/** The processes' texts (Prometheus exposition format) as one, by family, every series labelled. */
export function mergeMetrics(texts: readonly (string | null)[]): string {
  const families = new Map<string, { head: string[]; series: string[] }>();
  texts.forEach((text, index) => {
    if (text === null) return;
    let current: { head: string[]; series: string[] } | undefined;
    for (const line of text.split("\n")) {
      if (!line) continue;
      const m = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (m) {
        const name = m[2]!;
        current = families.get(name);
        if (!current) families.set(name, (current = { head: [], series: [] }));
        // HELP and TYPE once per family, from the first process that has it.
        if (current.head.length < 2 && !current.head.some((h) => h.startsWith(`# ${m[1]} `))) current.head.push(line);
        continue;
      }
      if (line.startsWith("#")) continue;
      if (!current) {
        const name = line.split(/[{ ]/, 1)[0]!;
        current = families.get(name) ?? { head: [], series: [] };
        families.set(name, current);
      }
      current.series.push(labelled(line, index));
    }
  });
  let out = "";
  for (const f of families.values()) out += [...f.head, ...f.series].join("\n") + "\n";
  return out;
}

/**
 * The process side: `hostText()` asks the supervisor for the host's metrics, `own` renders this
 * process's when the supervisor asks. Without an IPC channel (one process) there is no host.
 */
export function processMetrics(own: () => Promise<string>): { hostText(): Promise<string> } | null {
  if (typeof process.send !== "function") return null;
  const waiting = new Map<number, (text: string) => void>();
  let next = 0;
  process.on("message", (m: HostMessage) => {
    if (m?.t === "metrics!")
      own()
        .catch(() => "")
        .then((text) => process.send!({ t: "metrics", id: m.id, text } satisfies HostMessage));
    else if (m?.t === "metrics=") {
      waiting.get(m.id)?.(m.text);
      waiting.delete(m.id);
    }
  });
  return {
    hostText() {
      const id = next++;
      return new Promise<string>((resolve) => {
        // A supervisor that does not answer: this process's own text, so a scrape never hangs.
        const timer = setTimeout(() => {
          waiting.delete(id);
          own().then(resolve, () => resolve(""));
        }, 3000);
        waiting.set(id, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
        process.send!({ t: "metrics?", id } satisfies HostMessage);
      });
    },
  };
}
