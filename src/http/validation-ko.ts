/**
 * Korean words for TypeBox's validation failures (TypeBox writes them in English only).
 * Keyed by its ValueErrorType, with the schema's bound where the English names one; a type
 * not listed here gets a generic sentence followed by the English one.
 */
import { ValueErrorType as T } from "@sinclair/typebox/errors";

type Failure = { type: number; schema?: Record<string, any> };

const WORDS: Partial<Record<T, (s: Record<string, any>) => string>> = {
  [T.Array]: () => "배열이어야 합니다.",
  [T.ArrayMaxItems]: (s) => `항목은 최대 ${s.maxItems}개입니다.`,
  [T.ArrayMinItems]: (s) => `항목이 최소 ${s.minItems}개 있어야 합니다.`,
  [T.ArrayUniqueItems]: () => "항목이 서로 달라야 합니다.",
  [T.Boolean]: () => "true 또는 false여야 합니다.",
  [T.Integer]: () => "정수여야 합니다.",
  [T.IntegerMaximum]: (s) => `${s.maximum} 이하의 정수여야 합니다.`,
  [T.IntegerMinimum]: (s) => `${s.minimum} 이상의 정수여야 합니다.`,
  [T.IntegerExclusiveMaximum]: (s) => `${s.exclusiveMaximum}보다 작은 정수여야 합니다.`,
  [T.IntegerExclusiveMinimum]: (s) => `${s.exclusiveMinimum}보다 큰 정수여야 합니다.`,
  [T.Number]: () => "숫자여야 합니다.",
  [T.NumberMaximum]: (s) => `${s.maximum} 이하여야 합니다.`,
  [T.NumberMinimum]: (s) => `${s.minimum} 이상이어야 합니다.`,
  [T.NumberExclusiveMaximum]: (s) => `${s.exclusiveMaximum}보다 작아야 합니다.`,
  [T.NumberExclusiveMinimum]: (s) => `${s.exclusiveMinimum}보다 커야 합니다.`,
  [T.Literal]: (s) => `${typeof s.const === "string" ? `'${s.const}'` : s.const}이어야 합니다.`,
  [T.Null]: () => "null이어야 합니다.",
  [T.Object]: () => "객체여야 합니다.",
  [T.ObjectAdditionalProperties]: () => "허용되지 않는 필드입니다.",
  [T.IntersectUnevaluatedProperties]: () => "허용되지 않는 필드입니다.",
  [T.ObjectRequiredProperty]: () => "필수 항목입니다.",
  [T.ObjectMaxProperties]: (s) => `필드는 최대 ${s.maxProperties}개입니다.`,
  [T.ObjectMinProperties]: (s) => `필드가 최소 ${s.minProperties}개 있어야 합니다.`,
  [T.String]: () => "문자열이어야 합니다.",
  [T.StringMaxLength]: (s) => `최대 ${s.maxLength}자입니다.`,
  [T.StringMinLength]: (s) => `최소 ${s.minLength}자여야 합니다.`,
  [T.StringPattern]: (s) => `'${s.pattern}' 형식과 맞지 않습니다.`,
  [T.StringFormat]: (s) => `'${s.format}' 형식이 아닙니다.`,
  [T.Union]: () => "허용되는 형식 중 어느 것과도 맞지 않습니다.",
};

/** The Korean `msg` of one TypeBox failure; `en` is TypeBox's own. */
export function koreanIssueMessage(v: Failure, en: string): string {
  const words = WORDS[v.type as T];
  return words ? words(v.schema ?? {}) : `값이 올바르지 않습니다 (${en}).`;
}
