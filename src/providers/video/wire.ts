/**
 * The video vendors' answers to a submit and a poll, as far as the adapters read them: checked
 * on arrival (../common/wire-check.ts), so a vendor answering a shape it does not document is
 * an upstream failure named by its path, not a job that fails later for a reason nobody logs.
 * Whether a finished task carries its result is the mapping's to judge (a state, not a shape).
 */
import { Type as T } from "@sinclair/typebox";
import { Maybe, wireCheck } from "../common/wire-check";

const Text = T.Optional(T.String());

/** Family K: every answer is the envelope `{code, message, data}`; `code` 0 is success. */
export const checkKlingSubmit = wireCheck(
  "create-task answer",
  T.Object({ code: T.Number(), message: Text, data: Maybe(T.Object({ task_id: Text })) }),
);
export const checkKlingPoll = wireCheck(
  "task",
  T.Object({
    code: T.Number(),
    message: Text,
    data: Maybe(
      T.Object({
        task_status: Text,
        task_status_msg: Maybe(T.String()),
        task_result: T.Optional(T.Object({ videos: T.Optional(T.Array(T.Object({ url: Text }))) })),
      }),
    ),
  }),
);

/** Family L (the v2 task form) and Family S (Ark tasks): `{id}` on submit, a status on poll. */
export const checkTaskId = wireCheck("create-task answer", T.Object({ id: T.String() }));
const TaskError = Maybe(T.Object({ message: Text }));
export const checkLtxPoll = wireCheck(
  "task",
  T.Object({ status: T.String(), video_url: Maybe(T.String()), error: TaskError }),
);
export const checkSeedancePoll = wireCheck(
  "task",
  T.Object({
    status: T.String(),
    content: Maybe(T.Object({ video_url: Text })),
    usage: Maybe(T.Object({ completion_tokens: Maybe(T.Number()) })),
    error: TaskError,
  }),
);

/** Family G: a long-running operation, `{name}` on submit; `done`, `error` or `response` on poll. */
export const checkVeoSubmit = wireCheck("operation", T.Object({ name: T.String() }));
export const checkVeoPoll = wireCheck(
  "operation",
  T.Object({
    name: T.String(),
    done: T.Optional(T.Boolean()),
    error: T.Optional(T.Object({ code: T.Optional(T.Number()), message: Text })),
    response: T.Optional(
      T.Object({
        generateVideoResponse: T.Optional(
          T.Object({
            generatedSamples: T.Optional(T.Array(T.Object({ video: T.Optional(T.Object({ uri: Text })) }))),
            raiMediaFilteredReasons: T.Optional(T.Array(T.Unknown())),
          }),
        ),
        usageMetadata: T.Optional(T.Object({ candidatesTokenCount: Maybe(T.Number()) })),
      }),
    ),
  }),
);
