/**
 * The intent classifier of `auto`, `cascade` (hard_categories) and `parallel`
 * (deep_categories): a fast local rule scorer, no model call, so routing adds microseconds
 * rather than a round trip. Each category has weighted English and Korean cues; the text
 * scored is the last user message (full weight) and the system message (half weight), both
 * cut to their first 4,000 characters. The highest score wins; below 2 points the request is
 * `general`; ties go to the more specific category (the order of CATEGORIES).
 */
import type { ChatMessage } from "../model/types";

/** In tie-break order: the more specific intent first. */
export const CATEGORIES = [
  "translation",
  "coding",
  "math",
  "summarization",
  "writing",
  "reasoning",
  "general",
] as const;
export type Category = (typeof CATEGORIES)[number];

const SCAN_CHARS = 4000;
const THRESHOLD = 2;

interface Cue {
  re: RegExp;
  points: number;
}

// Word cues use \b for Latin text; Korean cues are plain substrings (no word boundaries in Hangul).
const CUES: Record<Exclude<Category, "general">, Cue[]> = {
  translation: [
    { re: /\btranslat(e|ion|ing)\b/i, points: 4 },
    { re: /\b(in|into|to) (english|korean|japanese|chinese|french|german|spanish)\b/i, points: 2 },
    { re: /번역/, points: 4 },
    { re: /(영어|한국어|일본어|중국어|불어|독일어|스페인어)로/, points: 3 },
  ],
  coding: [
    { re: /```/, points: 3 },
    {
      re: /\b(function|def|class|import|return|const|let|var|async|await|lambda|struct|impl|fn)\b[^\n]{0,40}[({:=]/,
      points: 2,
    },
    {
      re: /\b(code|coding|program|script|bug|debug|compile[rd]?|refactor|stack ?trace|exception|regex|unit tests?|api endpoint)\b/i,
      points: 2,
    },
    {
      re: /\b(python|javascript|typescript|java|rust|golang|kotlin|swift|c\+\+|c#|sql|bash|dockerfile|kubernetes|react|node\.?js)\b/i,
      points: 2,
    },
    {
      re: /(TypeError|SyntaxError|NullPointerException|Traceback \(most recent call last\)|segmentation fault)/,
      points: 3,
    },
    { re: /(코드|코딩|함수|버그|디버그|디버깅|컴파일|프로그램|스크립트|리팩터|리팩토링|에러 메시지)/, points: 2 },
  ],
  math: [
    { re: /\d\s*[-+*/^×÷=]\s*\(?\d/, points: 2 },
    {
      re: /\b(solve|equation|integral|derivative|differentiate|integrate|probability|matrix|eigen\w*|theorem|prove|proof|calculate|factori[sz]e|polynomial|logarithm|geometry|algebra|calculus)\b/i,
      points: 2,
    },
    { re: /[∫∑√π∞≤≥≠∂]/, points: 3 },
    { re: /(방정식|미분|적분|확률|행렬|증명|계산|수학|다항식|기하학)/, points: 2 },
  ],
  summarization: [
    { re: /\b(summari[sz]e|summary|tl;?dr|key points|in (one|a few) sentences?|bullet points)\b/i, points: 4 },
    { re: /(요약|정리해|핵심만|세 줄로|한 줄로)/, points: 4 },
  ],
  writing: [
    { re: /\b(write|draft|compose|rewrite|polish|proofread)\b/i, points: 2 },
    {
      re: /\b(essay|story|poem|blog|article|email|e-mail|letter|cover letter|slogan|tagline|speech|novel|lyrics|caption|press release)\b/i,
      points: 2,
    },
    { re: /\b(tone|formal|casual|persuasive)\b/i, points: 1 },
    {
      re: /(작성|써 ?줘|써 ?주세요|글을|에세이|소설|시를|이메일|편지|블로그|자기소개서|보도자료|문구|카피)/,
      points: 2,
    },
  ],
  reasoning: [
    {
      re: /\b(why|explain|reason(ing)?|analy[sz]e|compare|trade-?offs?|pros and cons|step by step|logic(al)?|puzzle|riddle|deduce|infer|evaluate|which is better)\b/i,
      points: 1,
    },
    { re: /\b(step by step|think carefully|chain of thought|pros and cons|trade-?offs?)\b/i, points: 2 },
    { re: /(왜|이유|분석|비교|추론|논리|장단점|단계별|판단)/, points: 2 },
  ],
};

export interface Classification {
  category: Category;
  /** Points of the winning category (0 for `general`). */
  score: number;
}

/** Classifies a chat request by its last user message (and system message). */
export function classifyMessages(messages: readonly ChatMessage[]): Classification {
  let user = "";
  let system = "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (!user && m.role === "user") user = textOf(m);
    if (!system && m.role === "system") system = textOf(m);
    if (user && system) break;
  }
  return classifyText(user, system);
}

export function classifyText(user: string, system = ""): Classification {
  const u = user.slice(0, SCAN_CHARS);
  const s = system.slice(0, SCAN_CHARS);
  let best: Classification = { category: "general", score: 0 };
  for (const category of CATEGORIES) {
    if (category === "general") continue;
    let score = 0;
    for (const cue of CUES[category]) {
      if (cue.re.test(u)) score += cue.points;
      if (s && cue.re.test(s)) score += cue.points / 2;
    }
    if (score > best.score) best = { category, score };
  }
  return best.score >= THRESHOLD ? best : { category: "general", score: 0 };
}

function textOf(m: ChatMessage): string {
  if (typeof m.content === "string") return m.content;
  if (!Array.isArray(m.content)) return "";
  let out = "";
  for (const p of m.content) if (p.type === "text") out += (out ? "\n" : "") + p.text;
  return out;
}
