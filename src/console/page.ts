/**
 * The console's index page and its headers: no inline script or style anywhere, so the
 * Content-Security-Policy allows only this origin's files, and no page may frame the console.
 */
import type { ConsoleBundle } from "./bundle";

const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The policy with a payment provider's checkout sources added (Toss's widget: its script, its
 * frames and its API), on a deployment that configured that provider only.
 */
export function consoleCsp(extra?: { script: string[]; frame: string[]; connect: string[] }): string {
  if (!extra) return CONSOLE_CSP;
  return CONSOLE_CSP.replace("script-src 'self'", `script-src 'self' ${extra.script.join(" ")}`)
    .replace("connect-src 'self'", `connect-src 'self' ${extra.connect.join(" ")}`)
    .concat(`; frame-src ${extra.frame.join(" ")}`);
}

export const PAGE_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

/** `fx` is the USD→KRW rate charged, read by the Models page from a meta tag (data, not script). */
export function indexPage(b: ConsoleBundle, fx: number): string {
  const styles = b.styles.map((s) => `<link rel="stylesheet" href="console/${s}">`).join("");
  const scripts = b.scripts.map((s) => `<script type="module" src="console/${s}"></script>`).join("");
  return `<!doctype html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="gw-fx-usd-krw" content="${Number(fx)}">
<link rel="icon" href="data:,">
<title>Model Gateway</title>
${styles}${scripts}
</head>
<body>
<div id="app"></div>
<noscript>JavaScript is needed for the console. The API works without it: see /docs.</noscript>
</body>
</html>
`;
}
