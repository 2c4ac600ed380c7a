import type { ReplyStats } from '../../src/ipc/bindings';

/** A saved reply's stats as the backend sends them: 12 tokens at 85.33 tok/s after 120 ms, a 20-token prompt, nothing cached, dropped or drafted; `over` changes any of it. */
export const stats = (over: Partial<ReplyStats> = {}): ReplyStats => ({
  promptTokens: 20,
  cachedTokens: 0,
  completionTokens: 12,
  ttftMs: 120,
  decodeTps: 85.33,
  droppedMessages: 0,
  cutAtLimit: false,
  promptSource: 'new',
  draftedTokens: 0,
  acceptedTokens: 0,
  ...over,
});
