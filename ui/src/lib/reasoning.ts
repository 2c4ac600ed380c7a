// Reasoning models open their reply with <think>…</think> (and a remote API's reasoning is written
// so): the reply shows it apart, collapsed; a <think> anywhere else is ordinary (sanitized) text.
// The marks are hearth_core's, and a finished reply splits as hearth_core::split_reasoning splits
// it (both read src-tauri/crates/hearth-core/tests/data/reasoning_split.json).
import { REASONING_MARKS } from '../ipc/contract';

export type ReplyParts = {
  /** The reasoning's Markdown; null when the reply has none. */
  reasoning: string | null;
  /** The closing tag has not arrived yet and the reply is still streaming. */
  thinking: boolean;
  /** The rest of the reply, shown as usual. */
  answer: string;
};

const OPEN = REASONING_MARKS.open;
const CLOSE = REASONING_MARKS.close;

/** Split `content` into its reasoning and its answer; `streaming` holds back half-arrived tags. */
export function splitReasoning(content: string, streaming: boolean): ReplyParts {
  const start = content.length - content.trimStart().length;
  if (!content.startsWith(OPEN, start)) {
    // "<thi" may become "<think>": show nothing for the frame or two until it is known.
    const head = content.slice(start);
    const pending = streaming && head !== '' && OPEN.startsWith(head);
    return { reasoning: null, thinking: false, answer: pending ? '' : content };
  }
  const body = content.slice(start + OPEN.length);
  const end = body.indexOf(CLOSE);
  if (end < 0 && streaming) return { reasoning: withoutPartialTag(body), thinking: true, answer: '' };
  // Closed, or cut off while thinking (stopped, interrupted): whatever reasoning there is, done.
  const reasoning = (end < 0 ? body : body.slice(0, end)).trim();
  const answer = end < 0 ? '' : body.slice(end + CLOSE.length).trimStart();
  return { reasoning: reasoning === '' ? null : reasoning, thinking: false, answer };
}

/** `text` less a tail that may be the start of </think>. */
function withoutPartialTag(text: string): string {
  for (let n = Math.min(CLOSE.length - 1, text.length); n > 0; n--) {
    if (CLOSE.startsWith(text.slice(-n))) return text.slice(0, -n);
  }
  return text;
}
