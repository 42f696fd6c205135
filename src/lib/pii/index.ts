/** PII masking for text: detect, mask with per-request placeholders, restore (whole or streamed). */
export { findPii, type PiiKind, type PiiSpan } from "./detect";
export { maskPii, PiiMasker, type PiiMapping } from "./mask";
export { PiiStreamUnmasker, unmask } from "./unmask";
