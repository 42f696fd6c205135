/**
 * The video submit request as the wire carries it, with the specification's general ranges
 * (docs/decisions.md #3): a value outside them is a 422 with `loc` such as
 * `["body","duration_seconds"]`. What a particular model forbids inside these ranges is
 * checked later, by the family rules (400). Defaults are applied there too, because some
 * rules depend on whether a field was sent at all (Family K `resolution`, Family G Omni
 * `duration_seconds`).
 *
 * Unknown fields are ignored (the submit table is not a closed contract for clients).
 */
import { Type, type Static } from "@sinclair/typebox";
import { RESOLUTIONS } from "../catalog/schema";
import { invalid, text } from "../errors";

/** HTTP(S) URLs only: no data:, file:, gs: or relative references. */
const HttpUrl = Type.String({ pattern: "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+[^\\s]*$", maxLength: 4096 });

export const MAX_PROMPT_CHARS = 4000;
export const MAX_IMAGES = 9;
export const MAX_VIDEOS = 3;
export const MAX_AUDIOS = 3;
export const DEFAULT_DURATION = 8;
export const DEFAULT_RESOLUTION = "720p" as const;
export const DEFAULT_VIDEO_MODEL = "veo-3";

export const VideoSubmitSchema = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    // Characters are counted as code points below; this bound only caps the work.
    prompt: Type.String({ minLength: 1, maxLength: MAX_PROMPT_CHARS * 2 }),
    duration_seconds: Type.Optional(Type.Integer({ minimum: 2, maximum: 20 })),
    resolution: Type.Optional(Type.Union(RESOLUTIONS.map((r) => Type.Literal(r)))),
    generate_audio: Type.Optional(Type.Boolean()),
    image: Type.Optional(Type.Union([HttpUrl, Type.Null()])),
    images: Type.Optional(Type.Array(HttpUrl, { maxItems: MAX_IMAGES })),
    videos: Type.Optional(Type.Array(HttpUrl, { maxItems: MAX_VIDEOS })),
    audios: Type.Optional(Type.Array(HttpUrl, { maxItems: MAX_AUDIOS })),
    // A fixed charge is a charge: 0 would be a free video (null is "not sent").
    charge_amount_krw: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000_000 }), Type.Null()])),
  },
  { additionalProperties: true },
);

export type VideoSubmitBody = Static<typeof VideoSubmitSchema>;

/** A reference URL as it will be forwarded, with the `loc` it came from. */
export interface ReferenceUrl {
  loc: (string | number)[];
  url: string;
}

/** The body's reference URLs, normalised: what is checked is exactly what is forwarded. */
export interface References {
  /** `image` merged in front of `images`. */
  images: string[];
  videos: string[];
  audios: string[];
  /** Every one of them with its `loc`, in body order. */
  all: ReferenceUrl[];
}

/**
 * The general rules TypeBox cannot say: the prompt's length in characters (code points, so
 * an emoji is one), well-formed reference URLs, and the image count after `image` is merged
 * in front of `images`.
 */
export function checkGeneralRules(body: VideoSubmitBody): References {
  if ([...body.prompt].length > MAX_PROMPT_CHARS) {
    throw invalid(
      ["body", "prompt"],
      text(`최대 ${MAX_PROMPT_CHARS}자입니다.`, `String must contain at most ${MAX_PROMPT_CHARS} character(s)`),
      "string_too_long",
    );
  }
  const all = rawReferences(body).map(({ loc, url }) => ({ loc, url: normalisedUrl(url, loc) }));
  const pick = (field: string) => all.filter((r) => r.loc[1] === field).map((r) => r.url);
  const images = [...pick("image"), ...pick("images")];
  if (images.length > MAX_IMAGES) {
    throw invalid(
      ["body", "images"],
      text(`'image'를 포함해 이미지는 최대 ${MAX_IMAGES}개입니다.`, `at most ${MAX_IMAGES} images including 'image'`),
      "too_long",
    );
  }
  return { images, videos: pick("videos"), audios: pick("audios"), all };
}

/**
 * A reference URL as the WHATWG parser reads it, or a 422. Parsers disagree about a
 * backslash (WHATWG reads it as '/', others as part of a user name: `http://1.1.1.1\@127.0.0.1/`
 * is host 1.1.1.1 to one and 127.0.0.1 to another), so one anywhere is refused; so is any
 * userinfo (credentials would be handed to a provider and end up in its logs). The
 * normalised form is what the host check sees and what the provider gets.
 */
function normalisedUrl(raw: string, loc: (string | number)[]): string {
  if (raw.includes("\\"))
    throw invalid(loc, text("URL에 역슬래시를 쓸 수 없습니다.", "URL must not contain a backslash"), "url_parsing");
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw invalid(loc, text("올바른 HTTP(S) URL이 아닙니다.", "not a valid HTTP(S) URL"), "url_parsing");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw invalid(loc, text("올바른 HTTP(S) URL이 아닙니다.", "not a valid HTTP(S) URL"), "url_parsing");
  if (parsed.username || parsed.password)
    throw invalid(
      loc,
      text("URL에 자격 증명(user:password@)을 넣을 수 없습니다.", "URL must not contain credentials (user:password@)"),
      "url_credentials",
    );
  return parsed.href;
}

/** Every reference URL of the body as sent, with its `loc`, in body order. */
function rawReferences(body: VideoSubmitBody): ReferenceUrl[] {
  const out: ReferenceUrl[] = [];
  if (body.image) out.push({ loc: ["body", "image"], url: body.image });
  for (const field of ["images", "videos", "audios"] as const)
    (body[field] ?? []).forEach((url, i) => out.push({ loc: ["body", field, i], url }));
  return out;
}
