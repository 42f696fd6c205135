/** The caller of a model call as the core sees it: who, under which request id, from which app. */
import type { KeyPrincipal } from "../core/auth/principal";
import type { ChatCaller, ClientApi } from "../core/chat/plan";
import { requestLang } from "./lang";
import { callIdentity } from "./request-id";
import { requestRecord } from "./request-log";
import { callSignalOf } from "./call-slots";

/** The calling app, named by the headers OpenAI-compatible clients already send. */
export function appName(request: Request): string | null {
  const title = request.headers.get("x-title")?.trim();
  if (title) return title.slice(0, 100);
  const ref = request.headers.get("http-referer") ?? request.headers.get("referer");
  if (!ref) return null;
  try {
    return new URL(ref).host.slice(0, 100) || null;
  } catch {
    return ref.slice(0, 100);
  }
}

/** An authenticated request's caller; `api` names the client API a chat call came in by. */
export function callerOf(request: Request, principal: KeyPrincipal, api?: ClientApi): ChatCaller {
  const { requestId, clientChosen } = callIdentity(request, principal.user.id);
  return {
    requestId,
    clientChosen,
    principal,
    app: appName(request),
    signal: callSignalOf(request),
    trace: requestRecord(request),
    lang: requestLang(request),
    api,
  };
}
