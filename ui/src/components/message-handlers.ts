import { getContext, setContext } from 'svelte';
import type { Decision, TokenProbs } from '../ipc/bindings';

/** What a message's buttons ask for, and what it shows that the ChatStore draws (thumbnails); App wires them. */
export type MessageHandlers = {
  startEdit: (messageId: number) => void;
  editText: (text: string) => void;
  saveEdit: () => void;
  cancelEdit: () => void;
  regenerate: (messageId: number) => void;
  continueReply: (messageId: number) => void;
  /** The token inspector: a reply's tokens with their distributions (rejects with an IpcError). */
  tokenProbs: (messageId: number) => Promise<TokenProbs[]>;
  /** A new version of the reply from its token `at`, taking alternative `token` there. */
  branch: (messageId: number, at: number, token: number) => void;
  /** Opens the Compare view: the reply's question answered again with 2–4 settings side by side. */
  compare: (messageId: number) => void;
  switchBranch: (messageId: number) => void;
  remove: (messageId: number) => void;
  /** Runs the calls of reply `messageId` again (each asked about, its arguments editable): a new version of their results. */
  rerunToolCalls: (messageId: number) => void;
  /** The user's word on call `index` of reply `messageId`, which the backend waits for (a tool call's approval). */
  answerToolCall: (messageId: number, index: number, decision: Decision) => void;
  /** A remote reply failed for want of a (valid) API key: the Providers settings fix it. */
  openProviderSettings: () => void;
  /** A sent image's thumbnail (a `data:` URL) once drawn; undefined until then, or when none can be. */
  thumbnail: (hash: string) => string | undefined;
};

const UNFOLLOW = Symbol('unfollow');

/**
 * MessageList: lets a message stop the list following its bottom, when the user opens something in it (the
 * candidates of a consensus reply, the token inspector) that must open where it was asked for, not scroll away to the bottom.
 */
export function provideUnfollow(unfollow: () => void): void {
  setContext(UNFOLLOW, unfollow);
}

/** Message: call while initialising; the function it returns stops the list following its bottom (if it was). */
export function listUnfollow(): () => void {
  return getContext<(() => void) | undefined>(UNFOLLOW) ?? (() => {});
}
