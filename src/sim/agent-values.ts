/**
 * Harmless, sensible argument values for the tools real agents run (Codex's shell, Claude
 * Code's Bash/Read/Glob/Grep, an SDK's file or search tool): the agent executes what the
 * simulator asks, so a command only echoes (unless the prompt spells one out in backquotes:
 * the user's own choice) and a path only names what the user named.
 * Matched by property name; undefined leaves the property to the plain schema sample.
 */
import { ownText } from "./agent-turn.ts";

/** What the schema allows at this property: a string, an array of strings, or else. */
export type ValueShape = "string" | "strings" | "other";

/** The command every simulated shell call runs: read-only, present everywhere, quick. */
const SIM_COMMAND = "echo sim";

const COMMAND = new Set(["command", "cmd", "commands", "script", "shell_command"]);
const FILE_PATH = new Set(["path", "file_path", "filepath", "filename", "file", "target_file", "notebook_path"]);
const DIRECTORY = new Set(["dir", "directory", "cwd", "workdir", "working_directory", "root"]);
const PATTERN = new Set(["pattern", "glob", "regex"]);
const QUERY = new Set(["query", "q", "search", "search_query", "question"]);
const URL = new Set(["url", "uri", "link"]);

export function agentValue(name: string, shape: ValueShape, userText: string): unknown {
  if (shape === "other") return undefined;
  const key = name.toLowerCase();
  const text = ownText(userText);
  let value: string | undefined;
  if (COMMAND.has(key)) {
    value = backquoted(text) ?? SIM_COMMAND;
    // An argv array: split on spaces (commands with quoting are the user's to spell out).
    if (shape === "strings") return value.split(/\s+/).filter(Boolean);
    return value;
  }
  if (FILE_PATH.has(key)) value = namedPath(text) ?? "README.md";
  else if (DIRECTORY.has(key)) value = ".";
  else if (PATTERN.has(key)) value = "*.md";
  else if (QUERY.has(key)) value = text.replace(/\s+/g, " ").trim().slice(0, 60) || "sim";
  else if (URL.has(key)) value = "https://example.com/";
  if (value === undefined) return undefined;
  return shape === "strings" ? [value] : value;
}

/** The first `backquoted` span of the user's text, e.g. "run `ls -la`". */
function backquoted(text: string): string | undefined {
  const m = /`([^`\n]+)`/.exec(text);
  return m ? m[1]!.trim() || undefined : undefined;
}

/** The first word that looks like a file path: has a slash, or a name with an extension. */
function namedPath(text: string): string | undefined {
  for (const raw of text.split(/\s+/)) {
    const word = raw.replace(/^[`'"(<[]+|[`'")>\],;:!?]+$/g, "").replace(/\.$/, "");
    if (/^(https?|ftp):/i.test(word)) continue;
    if (/^[\w.~-]*\/[\w./~-]*$/.test(word) && /\w/.test(word)) return word;
    if (/^[\w-]+\.[A-Za-z][\w]{0,7}$/.test(word)) return word;
  }
  return undefined;
}
