// One turn of the chat, from start to end: the path shown meanwhile, the chat's model's load followed
// when the backend must load it first, the reply streamed into the path on show (a frame at a time), its failure kept or said, and the path put
// back when nothing was saved. The state it changes is the chat store's (chat.svelte.ts), which starts
// the turns; the turn's own bookkeeping is kept here.
import { flushSync } from 'svelte';
import type { ChatEvent, StoredMessage } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { DeltaBatcher, type FrameScheduler } from './batcher';
import { isModelProblem } from './models';
import { callAsked, callProgressed, callRunning, callsEnded } from './tool-calls';
import type { ChatStore, TurnLoad } from './chat.svelte';
import {
  PENDING_REPLY_ID,
  PENDING_USER_ID,
  TERMINAL_EVENT_GRACE_MS,
  addsSibling,
  findMessage,
  newReplyVersion,
  pathDuringTurn,
  startTurn,
  withPendingSend,
  type TurnRequest,
} from './turns';

/** Bookkeeping for the one turn being generated (not reactive; the UI reads the store's `messages`). */
type Stream = {
  chatId: number;
  turn: TurnRequest;
  messageId: number | null;
  model: string | null;
  /** A provider writes the reply (not the local model): its failure is shown on the reply. */
  remote: boolean;
  /** The reply's whole text so far (a continued or branched reply's opening included), to restore it after switching chats. */
  text: string;
  /** The versions a regenerated or branched reply joins, for its arrows before the path is read again. */
  replySiblings: number[];
  replyParent: number | null;
  userSaved: boolean;
  /** The chat's model being loaded before the reply (the backend found it must be), while it is. */
  load: TurnLoad | null;
  /** The chat list is read again at the first token: not while the model reads the prompt,
   *  which shares the cores with the window (make bench-app). */
  refreshChatsAtFirstToken: boolean;
  /** Rounds of tool calls so far: each reply that called tools (`roundFinished`) ends one. */
  round: number;
  /** The reply whose calls are being asked about, run, and answered with results. */
  callingReply: number | null;
  done: boolean;
};

/** Runs the chat store's turns, one at a time. */
export class TurnRunner {
  readonly #chat: ChatStore;
  readonly #api: HearthApi;
  readonly #batcher: DeltaBatcher;
  readonly #frames: FrameScheduler;
  /** Reads chat `chatId`'s path again (`refresh`: it is on show; see ChatStore). */
  readonly #reload: (chatId: number, refresh?: boolean) => Promise<void>;
  #stream: Stream | null = null;
  #graceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(chat: ChatStore, api: HearthApi, frames: FrameScheduler, reload: (chatId: number, refresh?: boolean) => Promise<void>) {
    this.#chat = chat;
    this.#api = api;
    this.#reload = reload;
    this.#frames = frames;
    // flushSync: the DOM is updated inside the hand-over, in the frame it was scheduled for.
    this.#batcher = new DeltaBatcher((text) => {
      this.#applyDelta(text);
      flushSync();
      this.#refreshChatsAfterFirstText();
    }, frames);
  }

  /**
   * The one code path of every turn (the store has marked the chat generating): optimistic path,
   * streaming, terminal-event grace, undo.
   */
  async run(chatId: number, turn: TurnRequest): Promise<boolean> {
    const chat = this.#chat;
    const before = chat.messages;
    const original = 'messageId' in turn ? findMessage(before, turn.messageId) : undefined;
    const stream: Stream = {
      chatId,
      turn,
      messageId: null,
      model: null,
      remote: chat.chats.find((c) => c.id === chatId)?.model.kind === 'remote',
      text: turn.kind === 'continue' ? (original?.content ?? '') : '',
      replySiblings: newReplyVersion(turn) ? (original?.siblings ?? []) : [],
      replyParent: newReplyVersion(turn) ? (original?.parentId ?? null) : null,
      userSaved: false,
      load: null,
      refreshChatsAtFirstToken: false,
      round: 0,
      callingReply: null,
      done: false,
    };
    this.#stream = stream;
    if (chat.activeChatId === chatId) chat.messages = pathDuringTurn(before, turn);

    try {
      // At once: the backend loads the chat's model first where it must, and says so in the
      // turn's events (the load's progress shown, a sent message on show meanwhile).
      await startTurn(this.#api, chatId, turn, (event) => this.#onEvent(stream, event));
      if (!stream.done) {
        // The response beat the terminal event; give the channel a moment, then resync.
        this.#graceTimer = setTimeout(() => {
          this.#graceTimer = null;
          if (!stream.done) void this.#abandon(stream);
        }, TERMINAL_EVENT_GRACE_MS);
      }
      return true;
    } catch (e) {
      const modelFailed = isModelProblem(e);
      this.#endLoad(stream, modelFailed ? e : undefined);
      if (modelFailed) chat.models.failed(chatId, e);
      // Stop while the model loaded gave the load up: nothing to say.
      if (!(modelFailed && chat.generating?.stopping)) chat.showError(e);
      if (!stream.userSaved && stream.messageId === null) this.#undo(stream, before);
      if (!stream.done) await this.#abandon(stream);
      return false;
    }
  }

  /** Stop while the turn's model loads: the load is given up (the turn then ends with nothing saved). */
  async stopLoad(): Promise<void> {
    await this.#stream?.load?.cancel();
  }

  #endLoad(stream: Stream, error?: unknown): void {
    stream.load?.end(error);
    stream.load = null;
  }

  /** After (re)loading the chat that is streaming, put the live text back into its bubble. */
  restore(): void {
    const stream = this.#stream;
    if (!stream || stream.done || stream.chatId !== this.#chat.activeChatId || stream.messageId === null) return;
    const msg = this.#find(stream.messageId);
    if (msg) {
      msg.content = stream.text;
      msg.status = 'streaming';
    } else {
      this.#chat.messages.push(this.#liveReply(stream));
    }
  }

  /** Nothing was saved: put back the path, and what the user typed and attached. */
  #undo(stream: Stream, before: StoredMessage[]): void {
    const { turn, chatId } = stream;
    const chat = this.#chat;
    if (chat.activeChatId === chatId) chat.messages = before;
    if (turn.kind === 'send') {
      if (chat.draft === '') chat.draft = turn.content;
      chat.attachments.restore(turn.attachments);
    }
    if (turn.kind === 'edit' && chat.activeChatId === chatId && chat.editing === null) {
      chat.editing = { messageId: turn.messageId, text: turn.content };
    }
  }

  #onEvent(stream: Stream, event: ChatEvent): void {
    if (stream.done || stream !== this.#stream) return;
    switch (event.event) {
      case 'modelLoading': {
        if (!stream.load) {
          stream.load = this.#chat.models.turnLoad(stream.chatId);
          const { turn, chatId } = stream;
          if (turn.kind === 'send' && this.#chat.activeChatId === chatId) {
            this.#chat.messages = withPendingSend(this.#chat.messages, chatId, turn.content, turn.attachments);
          }
        }
        stream.load.progress(event.data);
        break;
      }
      case 'userSaved': {
        this.#endLoad(stream);
        stream.userSaved = true;
        const saved = event.data.message;
        stream.replyParent = saved.id; // the next reply follows it
        if (saved.role === 'tool') {
          // A call's result (each in turn, once every call has had its turn): none of them runs any more.
          if (stream.callingReply !== null) this.#chat.liveCalls = callsEnded(this.#chat.liveCalls, stream.callingReply);
          this.#upsert(stream.chatId, saved);
          break;
        }
        this.#upsert(stream.chatId, saved, PENDING_USER_ID);
        stream.refreshChatsAtFirstToken = true; // the backend may have titled the chat from this message
        break;
      }
      case 'replyStarted': {
        this.#endLoad(stream);
        // Stop came as the load ended, before the reply was there to stop: stop it now.
        if (this.#chat.generating?.stopping) void this.#api.stopGeneration(stream.chatId);
        stream.messageId = event.data.messageId;
        stream.model = event.data.model;
        stream.text = event.data.text;
        this.#upsert(stream.chatId, this.#liveReply(stream));
        break;
      }
      case 'delta':
        this.#batcher.push(event.data.text);
        break;
      case 'searching':
        if (stream.messageId !== null) this.#chat.searching = { reply: stream.messageId, tokens: event.data.tokens };
        break;
      case 'finished': {
        this.#batcher.flush();
        const { message } = event.data;
        this.#upsert(stream.chatId, message);
        this.#finish(stream);
        break;
      }
      case 'roundFinished': {
        // The reply called tools: it is saved with its calls, which come next; then a new reply.
        this.#batcher.flush();
        const { message } = event.data;
        this.#upsert(stream.chatId, message);
        stream.callingReply = message.id;
        stream.messageId = null;
        stream.text = '';
        stream.replySiblings = [];
        stream.round += 1;
        break;
      }
      case 'toolApproval':
        this.#chat.liveCalls = callAsked(this.#chat.liveCalls, event.data);
        break;
      case 'toolRunning':
        this.#chat.liveCalls = callRunning(this.#chat.liveCalls, event.data);
        break;
      case 'toolProgress': {
        const { reply, index, progress } = event.data;
        this.#chat.liveCalls = callProgressed(this.#chat.liveCalls, reply, index, progress);
        break;
      }
      case 'toolsUnavailable':
        this.#chat.toolsUnavailable = { chatId: stream.chatId, servers: event.data.servers };
        break;
      case 'roundLimit':
        // The turn used its rounds: the reply as saved again, its stats saying so (shown under it).
        this.#upsert(stream.chatId, event.data.message);
        break;
      case 'failed': {
        this.#batcher.flush();
        const { error, message } = event.data;
        if (message) this.#upsert(stream.chatId, message);
        else this.#dropLiveReply(stream);
        if (message && stream.remote) {
          const retryAt = error.retryAfterS ? Date.now() + error.retryAfterS * 1000 : null;
          this.#chat.failures[message.id] = { chatId: stream.chatId, error, retryAt };
        } else if (!message?.stats?.interruptedBy) {
          // A reply the engine died under says why on itself, with Continue; no banner too.
          this.#chat.showError(error);
        }
        this.#finish(stream);
        break;
      }
    }
  }

  /**
   * The chat list is read again once the reply's first text is on screen (the backend may have
   * titled the chat from the user's message), not before: its answer and the list's re-render
   * would land in the frame that paints the first token, the one the user waits for (make
   * bench-app: first text → painted took up to ~35 ms with it).
   */
  #refreshChatsAfterFirstText(): void {
    const stream = this.#stream;
    if (!stream?.refreshChatsAtFirstToken) return;
    stream.refreshChatsAtFirstToken = false;
    // A timer set inside the frame runs once the frame is painted.
    const { after } = this.#frames;
    if (after) after(() => void this.#chat.refreshChats(), 0);
    else void this.#chat.refreshChats();
  }

  #applyDelta(text: string): void {
    const stream = this.#stream;
    if (!stream || stream.done) return;
    stream.text += text;
    if (stream.messageId === null || this.#chat.activeChatId !== stream.chatId) return;
    const msg = this.#find(stream.messageId);
    if (msg) msg.content += text;
  }

  /** The reply failed and nothing was saved: a new reply leaves, a continued one keeps its text. */
  #dropLiveReply(stream: Stream): void {
    if (stream.messageId === null || this.#chat.activeChatId !== stream.chatId) return;
    if (stream.turn.kind === 'continue' && stream.round === 0) {
      const msg = this.#find(stream.messageId);
      if (msg) msg.status = 'failed';
    } else {
      this.#chat.messages = this.#chat.messages.filter((m) => m.id !== stream.messageId);
    }
  }

  #finish(stream: Stream): void {
    this.#endLoad(stream);
    stream.done = true;
    if (this.#graceTimer !== null) {
      clearTimeout(this.#graceTimer);
      this.#graceTimer = null;
    }
    if (this.#stream === stream) {
      this.#batcher.cancel();
      this.#stream = null;
      this.#chat.generating = null;
      this.#chat.liveCalls = {};
      this.#chat.searching = null;
      void this.#chat.refreshChats();
    }
    if (addsSibling(stream.turn) && this.#chat.activeChatId === stream.chatId) {
      void this.#reload(stream.chatId, true); // the versions' `siblings` changed
    }
  }

  /** The call ended without a terminal event: resync from the backend. */
  async #abandon(stream: Stream): Promise<void> {
    this.#batcher.flush();
    this.#finish(stream);
    if (this.#chat.activeChatId === stream.chatId && (stream.userSaved || stream.messageId !== null)) {
      await this.#reload(stream.chatId);
    }
  }

  /** The streaming reply as shown: the continued message itself, or a new placeholder. */
  #liveReply(stream: Stream): StoredMessage {
    const id = stream.messageId ?? PENDING_REPLY_ID;
    const existing = this.#find(id);
    if (existing) return { ...existing, content: stream.text, status: 'streaming', model: stream.model ?? existing.model };
    return {
      id,
      chatId: stream.chatId,
      role: 'assistant',
      content: stream.text,
      status: 'streaming',
      createdAt: Date.now(),
      model: stream.model,
      stats: null,
      parentId: stream.replyParent,
      siblings: [...stream.replySiblings, id],
      tool: null,
      toolCalls: [],
      attachments: [],
      passages: [],
    };
  }

  #find(id: number): StoredMessage | undefined {
    return findMessage(this.#chat.messages, id);
  }

  /** Insert or replace (the message of the same id, or the stand-in `replacing`) if `chatId` is on screen. */
  #upsert(chatId: number, message: StoredMessage, replacing?: number): void {
    const chat = this.#chat;
    if (chat.activeChatId !== chatId) return;
    const index = chat.messages.findIndex((m) => m.id === message.id || m.id === replacing);
    if (index >= 0) chat.messages[index] = message;
    else chat.messages.push(message);
  }
}
