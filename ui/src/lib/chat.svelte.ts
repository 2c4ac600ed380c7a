import { flushSync } from 'svelte';
import type {
  ChatEvent,
  ChatSummary,
  CompareEvent,
  IpcError,
  IpcErrorKind,
  ModelInfo,
  ModelTarget,
  SamplingParams,
  StoredMessage,
  TokenProbs,
} from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { DeltaBatcher, animationFrames, type FrameScheduler } from './batcher';
import { chatAfterRemoval, replaceChat, sortChats } from './chat-list';
import { errorMessage } from './format';
import { DraftReadAhead, browserTimers, type Timers } from './read-ahead';
import { PENDING_REPLY_ID, PENDING_USER_ID, addsSibling, newReplyVersion, pathDuringTurn, startTurn, withPendingSend, type TurnRequest } from './turns';

/** Bookkeeping for the one turn being generated (not reactive; the UI reads `messages`). */
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
  /** The chat list is read again at the first token: not while the model reads the prompt,
   *  which shares the cores with the window (make bench-app). */
  refreshChatsAtFirstToken: boolean;
  done: boolean;
};

export type Generating = { chatId: number; stopping: boolean };

/** What the chat store asks of the chats' local models (ChatModelStore, set by the app). */
export type ChatModels = {
  /** A chat was opened (its model may need loading). */
  opened(chatId: number): void;
  /** Before a turn: the chat's model loaded (rejects with why not); null when there is nothing to wait for. */
  readyForTurn(chatId: number): Promise<void> | null;
};

/** Nothing to load (the store on its own, as in its unit tests). */
const NO_CHAT_MODELS: ChatModels = { opened: () => {}, readyForTurn: () => null };

/**
 * Why a remote reply failed, shown on the reply with a Retry button. `retryAt` (Unix ms): when the
 * provider said it takes requests again (rate limits); null when it did not say.
 */
export type ReplyFailure = { chatId: number; error: IpcError; retryAt: number | null };

/** The user message being edited in place, and the text typed so far. */
export type Editing = { messageId: number; text: string };

/**
 * How long to wait for the terminal channel event after a turn command resolved. Tauri delivers
 * channel messages and the command response separately, so the response may win the race.
 */
export const TERMINAL_EVENT_GRACE_MS = 2000;

/** All chat-screen state plus the streaming logic; components only render it. */
export class ChatStore {
  /** Pinned first, then the most recently updated. */
  chats = $state<ChatSummary[]>([]);
  activeChatId = $state<number | null>(null);
  /** The active chat's path on show (root to current leaf), chronological. */
  messages = $state<StoredMessage[]>([]);
  model = $state<ModelInfo | null>(null);
  /** True once the first list_chats/active_model round trip ended (either way). */
  ready = $state(false);
  loadingMessages = $state(false);
  draft = $state('');
  editing = $state<Editing | null>(null);
  error = $state<string | null>(null);
  /** The kind of the IPC error in `error`, when it was one (the banner offers what to do about some). */
  errorKind = $state<IpcErrorKind | null>(null);
  /** Failed remote replies of this session by message id; a chat's are dropped when its next turn starts. */
  failures = $state<Record<number, ReplyFailure>>({});
  generating = $state<Generating | null>(null);

  activeChat = $derived(this.chats.find((c) => c.id === this.activeChatId) ?? null);
  generatingHere = $derived(this.generating !== null && this.generating.chatId === this.activeChatId);
  /** One turn at a time: the backend answers `busy` to a second one. */
  busy = $derived(this.generating !== null);
  canSend = $derived(this.draft.trim().length > 0 && this.generating === null);

  /** Loads each chat's model as it opens and before its turns. */
  models: ChatModels = NO_CHAT_MODELS;

  readonly #api: HearthApi;
  readonly #batcher: DeltaBatcher;
  readonly #frames: FrameScheduler;
  readonly #readAhead: DraftReadAhead;
  #stream: Stream | null = null;
  #loadToken = 0;
  #loading: Promise<void> = Promise.resolve();
  #turnsStarted = 0;
  #graceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(api: HearthApi, frames: FrameScheduler = animationFrames, timers: Timers = browserTimers) {
    this.#api = api;
    this.#readAhead = new DraftReadAhead((draft, stillTyping) => this.#prefillDraft(draft, stillTyping), timers);
    // flushSync: the DOM is updated inside the hand-over, so the batcher's pacing sees its cost.
    this.#frames = frames;
    this.#batcher = new DeltaBatcher((text) => {
      this.#applyDelta(text);
      flushSync();
      this.#refreshChatsAfterFirstText();
    }, frames);
  }

  async init(): Promise<void> {
    const [chats, model] = await Promise.allSettled([this.#api.listChats(), this.#api.activeModel()]);
    if (model.status === 'fulfilled') this.model = model.value;
    else this.showError(model.reason);
    if (chats.status === 'fulfilled') {
      this.chats = chats.value;
      await this.#openFirst();
    } else {
      this.showError(chats.reason);
    }
    this.ready = true;
  }

  /** Apply the backend's own changes to chats (automatic titles); resolves to the unsubscribe. */
  async listen(): Promise<() => void> {
    try {
      return await this.#api.onChatUpdated((chat) => this.applyChatUpdate(chat));
    } catch (e) {
      // Not worth a banner: titles still arrive with the next list_chats.
      console.warn('background chat updates are not available:', errorMessage(e));
      return () => {};
    }
  }

  showError(error: unknown): void {
    this.error = errorMessage(error);
    const kind = (error as Partial<IpcError> | null)?.kind;
    this.errorKind = typeof kind === 'string' ? kind : null;
  }

  dismissError(): void {
    this.error = null;
    this.errorKind = null;
  }

  async refreshChats(): Promise<void> {
    try {
      this.chats = await this.#api.listChats();
    } catch (e) {
      this.showError(e);
    }
  }

  /** Chats were added behind the list's back (an import): read it again; open the first when none is open. */
  async chatsAdded(): Promise<void> {
    await this.refreshChats();
    await this.#openFirst();
  }

  async refreshModel(): Promise<void> {
    try {
      this.model = await this.#api.activeModel();
    } catch (e) {
      this.showError(e);
    }
  }

  /**
   * The user changed the composer's text: the backend reads the draft ahead (the local model
   * prefills the chat and what was typed so far), paced by DraftReadAhead; never while this chat's
   * reply is generated.
   */
  draftTyped(draft: string): void {
    if (this.activeChatId === null || this.generatingHere) this.#readAhead.cancel();
    else this.#readAhead.typed(draft);
  }

  #prefillDraft(draft: string, stillTyping: boolean): void {
    const chatId = this.activeChatId;
    if (chatId === null || this.generating?.chatId === chatId) return;
    // Only a head start: a failure changes nothing for the user.
    this.#api.prefillDraft(chatId, draft, stillTyping).catch((e) => console.debug('draft not read ahead:', errorMessage(e)));
  }

  /** Show `chatId`; resolves once its messages are loaded (also when it already was the active chat). */
  selectChat(chatId: number): Promise<void> {
    if (chatId === this.activeChatId) return this.#loading;
    this.#readAhead.reset();
    this.activeChatId = chatId;
    this.messages = [];
    this.editing = null;
    this.models.opened(chatId);
    return this.#loadMessages(chatId);
  }

  async newChat(): Promise<ChatSummary | null> {
    try {
      const chat = await this.#api.createChat();
      this.chats = sortChats([chat, ...this.chats.filter((c) => c.id !== chat.id)]);
      this.#showNothing();
      this.activeChatId = chat.id;
      this.models.opened(chat.id);
      return chat;
    } catch (e) {
      this.showError(e);
      return null;
    }
  }

  applyChatUpdate(chat: ChatSummary): void {
    this.chats = replaceChat(this.chats, chat);
  }

  renameChat(chatId: number, title: string): Promise<boolean> {
    return this.#updateChat(() => this.#api.renameChat(chatId, title.trim()));
  }

  pinChat(chatId: number, pinned: boolean): Promise<boolean> {
    return this.#updateChat(() => this.#api.pinChat(chatId, pinned));
  }

  setSystemPrompt(chatId: number, prompt: string): Promise<boolean> {
    return this.#updateChat(() => this.#api.setSystemPrompt(chatId, prompt));
  }

  /** Where the chat's next reply comes from; allowed at any point, even while a reply streams. */
  setChatModel(chatId: number, target: ModelTarget): Promise<boolean> {
    return this.#updateChat(() => this.#api.setChatModel(chatId, target));
  }

  /** Delete a chat; when it was on show, the next one in the list (or none) is shown instead. */
  async deleteChat(chatId: number): Promise<boolean> {
    try {
      await this.#api.deleteChat(chatId);
    } catch (e) {
      this.showError(e);
      return false;
    }
    const next = chatAfterRemoval(this.chats, chatId);
    this.chats = this.chats.filter((c) => c.id !== chatId);
    if (this.activeChatId === chatId) {
      if (next) await this.selectChat(next.id);
      else this.#showNothing();
    }
    return true;
  }

  /** Send the draft to the active chat (creating one if none). Resolves when the call ended. */
  async send(): Promise<boolean> {
    const content = this.draft.trim();
    if (!content || this.generating !== null) return false;

    let chatId = this.activeChatId;
    if (chatId === null) {
      const chat = await this.newChat();
      if (!chat) return false;
      chatId = chat.id;
    }
    this.draft = '';
    return this.#runTurn(chatId, { kind: 'send', content });
  }

  startEdit(messageId: number): void {
    const message = this.#find(messageId);
    if (message?.role === 'user') this.editing = { messageId, text: message.content };
  }

  cancelEdit(): void {
    this.editing = null;
  }

  /** Send the edited text as a new version of its message, and stream a reply to it. */
  async saveEdit(): Promise<boolean> {
    const editing = this.editing;
    const content = editing?.text.trim();
    if (!editing || !content || this.activeChatId === null || this.generating !== null) return false;
    this.editing = null;
    return this.#runTurn(this.activeChatId, { kind: 'edit', messageId: editing.messageId, content });
  }

  regenerate(messageId: number): Promise<boolean> {
    return this.#turnOnActive({ kind: 'regenerate', messageId });
  }

  continueReply(messageId: number): Promise<boolean> {
    return this.#turnOnActive({ kind: 'continue', messageId });
  }

  /**
   * A new version of reply `messageId` that keeps its first `at` tokens, takes alternative `token` there and
   * writes on; `opening` (those tokens' text and the alternative's) shows while it is written, as a
   * regenerated reply streams.
   */
  branchReply(messageId: number, at: number, token: number, opening: string): Promise<boolean> {
    return this.#turnOnActive({ kind: 'branch', messageId, at, token, opening });
  }

  /** Reply `messageId`'s tokens with the distribution each was drawn from (none: empty); rejects with an IpcError. */
  tokenProbs(messageId: number): Promise<TokenProbs[]> {
    return this.#api.tokenProbs(messageId);
  }

  /**
   * Answer the question of reply `messageId` once per settings in `variants` (2 to 4), side by side: each answer
   * a new version of the reply, its events tagged with its column and handed to `onEvent` (the Compare view
   * shows them; the chat does not). The chat is generating meanwhile (one turn at a time; Stop stops them
   * all). Resolves true once all have ended, the path read again (the backend shows the last answer); false
   * when a turn is already running; rejects with the backend's refusal (nothing started then).
   */
  async compare(messageId: number, variants: SamplingParams[], onEvent: (event: CompareEvent) => void): Promise<boolean> {
    const chatId = this.activeChatId;
    if (chatId === null || this.generating !== null) return false;
    this.dismissError();
    this.failures = Object.fromEntries(Object.entries(this.failures).filter(([, f]) => f.chatId !== chatId));
    this.#readAhead.reset();
    this.#turnsStarted += 1;
    this.generating = { chatId, stopping: false };
    try {
      const ready = this.models.readyForTurn(chatId);
      if (ready) await ready;
      await this.#api.compareReplies(chatId, messageId, variants, onEvent);
    } finally {
      if (this.generating?.chatId === chatId) this.generating = null;
    }
    void this.refreshChats();
    // The answers are new versions of the reply, the last on show.
    if (this.activeChatId === chatId) await this.#loadMessages(chatId, true);
    return true;
  }

  async stop(): Promise<void> {
    const g = this.generating;
    if (!g || g.stopping) return;
    g.stopping = true;
    try {
      await this.#api.stopGeneration(g.chatId);
    } catch (e) {
      if (this.generating === g) g.stopping = false;
      this.showError(e);
    }
  }

  /** Show the branch through `messageId` (one of a message's versions). */
  switchBranch(messageId: number): Promise<boolean> {
    return this.#replacePath((chatId) => this.#api.switchBranch(chatId, messageId));
  }

  /** Delete a message and everything under it; the backend says which path is shown then. */
  deleteMessage(messageId: number): Promise<boolean> {
    if (this.editing?.messageId === messageId) this.editing = null;
    return this.#replacePath((chatId) => this.#api.deleteMessage(chatId, messageId));
  }

  /**
   * Show message `messageId` of chat `chatId` (a search result): open the chat and, when the
   * message is on another branch, switch to it. True when the message is on the path then.
   */
  async openMessage(chatId: number, messageId: number): Promise<boolean> {
    await this.selectChat(chatId);
    if (this.activeChatId !== chatId) return false;
    if (this.#find(messageId)) return true;
    if (this.generating?.chatId === chatId) {
      this.showError('That message is on another branch: open it once the reply has finished.');
      return false;
    }
    return (await this.switchBranch(messageId)) && this.#find(messageId) !== undefined;
  }

  #turnOnActive(turn: TurnRequest): Promise<boolean> {
    if (this.activeChatId === null || this.generating !== null) return Promise.resolve(false);
    return this.#runTurn(this.activeChatId, turn);
  }

  /** The one code path of every turn: optimistic path, streaming, terminal-event grace, undo. */
  async #runTurn(chatId: number, turn: TurnRequest): Promise<boolean> {
    this.dismissError();
    // A new attempt: earlier failures of this chat are history (their replies still say "Failed").
    this.failures = Object.fromEntries(Object.entries(this.failures).filter(([, f]) => f.chatId !== chatId));
    const before = this.messages;
    const original = 'messageId' in turn ? this.#find(turn.messageId) : undefined;
    const stream: Stream = {
      chatId,
      turn,
      messageId: null,
      model: null,
      remote: this.chats.find((c) => c.id === chatId)?.model.kind === 'remote',
      text: turn.kind === 'continue' ? (original?.content ?? '') : turn.kind === 'branch' ? turn.opening : '',
      replySiblings: newReplyVersion(turn) ? (original?.siblings ?? []) : [],
      replyParent: newReplyVersion(turn) ? (original?.parentId ?? null) : null,
      userSaved: false,
      refreshChatsAtFirstToken: false,
      done: false,
    };
    this.#stream = stream;
    this.#readAhead.reset(); // the draft was sent, or a reply is under way: nothing to read ahead
    this.#turnsStarted += 1;
    this.generating = { chatId, stopping: false };
    if (this.activeChatId === chatId) this.messages = pathDuringTurn(before, turn);

    try {
      // The chat's model first, its load's progress shown, a sent message on show meanwhile; Stop
      // meanwhile means the turn never starts. (Nothing to wait for: the turn starts in the same task.)
      const ready = this.models.readyForTurn(chatId);
      if (ready) {
        if (turn.kind === 'send' && this.activeChatId === chatId) this.messages = withPendingSend(this.messages, chatId, turn.content);
        await ready;
      }
      if (this.generating?.stopping) {
        this.#undo(stream, before);
        this.#finish(stream);
        return false;
      }
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
      this.showError(e);
      if (!stream.userSaved && stream.messageId === null) this.#undo(stream, before);
      if (!stream.done) await this.#abandon(stream);
      return false;
    }
  }

  /** Nothing was saved: put back the path and what the user typed. */
  #undo(stream: Stream, before: StoredMessage[]): void {
    const { turn, chatId } = stream;
    if (this.activeChatId === chatId) this.messages = before;
    if (turn.kind === 'send' && this.draft === '') this.draft = turn.content;
    if (turn.kind === 'edit' && this.activeChatId === chatId && this.editing === null) {
      this.editing = { messageId: turn.messageId, text: turn.content };
    }
  }

  async #updateChat(request: () => Promise<ChatSummary>): Promise<boolean> {
    try {
      this.applyChatUpdate(await request());
      return true;
    } catch (e) {
      this.showError(e);
      return false;
    }
  }

  /**
   * Replace the active chat's path with what `request` returns; never while this chat streams, as
   * its reply would land on the wrong path.
   */
  async #replacePath(request: (chatId: number) => Promise<StoredMessage[]>): Promise<boolean> {
    const chatId = this.activeChatId;
    if (chatId === null || this.generating?.chatId === chatId) return false;
    const token = ++this.#loadToken;
    try {
      const path = await request(chatId);
      if (token === this.#loadToken) this.messages = path;
      return true;
    } catch (e) {
      this.showError(e);
      return false;
    }
  }

  /** With no chat open, show the one at the top of the list (if any). */
  async #openFirst(): Promise<void> {
    if (this.activeChatId === null && this.chats.length > 0) await this.selectChat(this.chats[0].id);
  }

  #showNothing(): void {
    this.#readAhead.reset();
    this.#loadToken += 1; // drop any in-flight load of the previous chat
    this.activeChatId = null;
    this.messages = [];
    this.editing = null;
    this.loadingMessages = false;
  }

  /**
   * Read the active path. `refresh`: the chat is already on show (a turn added siblings), so keep
   * it on screen meanwhile, and drop the answer if another turn started since.
   */
  #loadMessages(chatId: number, refresh = false): Promise<void> {
    const token = ++this.#loadToken;
    const turns = this.#turnsStarted;
    if (!refresh) this.loadingMessages = true;
    const load = async () => {
      try {
        const messages = await this.#api.listMessages(chatId);
        if (token !== this.#loadToken || (refresh && turns !== this.#turnsStarted)) return;
        this.messages = messages;
        this.#restoreStream();
      } catch (e) {
        if (token === this.#loadToken) this.showError(e);
      } finally {
        if (token === this.#loadToken) this.loadingMessages = false;
      }
    };
    this.#loading = load();
    return this.#loading;
  }

  #onEvent(stream: Stream, event: ChatEvent): void {
    if (stream.done || stream !== this.#stream) return;
    switch (event.event) {
      case 'userSaved': {
        stream.userSaved = true;
        stream.replyParent = event.data.message.id;
        this.#upsert(stream.chatId, event.data.message, PENDING_USER_ID);
        stream.refreshChatsAtFirstToken = true; // the backend may have titled the chat from this message
        break;
      }
      case 'replyStarted': {
        stream.messageId = event.data.messageId;
        stream.model = event.data.model;
        this.#upsert(stream.chatId, this.#liveReply(stream));
        break;
      }
      case 'delta':
        this.#batcher.push(event.data.text);
        break;
      case 'finished':
        this.#batcher.flush();
        this.#upsert(stream.chatId, event.data.message);
        this.#finish(stream);
        break;
      case 'failed': {
        this.#batcher.flush();
        const { error, message } = event.data;
        if (message) this.#upsert(stream.chatId, message);
        else this.#dropLiveReply(stream);
        if (message && stream.remote) {
          const retryAt = error.retryAfterS ? Date.now() + error.retryAfterS * 1000 : null;
          this.failures[message.id] = { chatId: stream.chatId, error, retryAt };
        } else if (!message?.stats?.interruptedBy) {
          // A reply the engine died under says why on itself, with Continue; no banner too.
          this.showError(error);
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
    if (after) after(() => void this.refreshChats(), 0);
    else void this.refreshChats();
  }

  #applyDelta(text: string): void {
    const stream = this.#stream;
    if (!stream || stream.done) return;
    stream.text += text;
    if (stream.messageId === null || this.activeChatId !== stream.chatId) return;
    const msg = this.#find(stream.messageId);
    if (msg) msg.content += text;
  }

  /** The reply failed and nothing was saved: a new reply leaves, a continued one keeps its text. */
  #dropLiveReply(stream: Stream): void {
    if (stream.messageId === null || this.activeChatId !== stream.chatId) return;
    if (stream.turn.kind === 'continue') {
      const msg = this.#find(stream.messageId);
      if (msg) msg.status = 'failed';
    } else {
      this.messages = this.messages.filter((m) => m.id !== stream.messageId);
    }
  }

  #finish(stream: Stream): void {
    stream.done = true;
    if (this.#graceTimer !== null) {
      clearTimeout(this.#graceTimer);
      this.#graceTimer = null;
    }
    if (this.#stream === stream) {
      this.#batcher.cancel();
      this.#stream = null;
      this.generating = null;
      void this.refreshChats();
    }
    if (addsSibling(stream.turn) && this.activeChatId === stream.chatId) {
      void this.#loadMessages(stream.chatId, true); // the versions' `siblings` changed
    }
  }

  /** The call ended without a terminal event: resync from the backend. */
  async #abandon(stream: Stream): Promise<void> {
    this.#batcher.flush();
    this.#finish(stream);
    if (this.activeChatId === stream.chatId && (stream.userSaved || stream.messageId !== null)) {
      await this.#loadMessages(stream.chatId);
    }
  }

  /** After (re)loading the chat that is streaming, put the live text back into its bubble. */
  #restoreStream(): void {
    const stream = this.#stream;
    if (!stream || stream.done || stream.chatId !== this.activeChatId || stream.messageId === null) return;
    const msg = this.#find(stream.messageId);
    if (msg) {
      msg.content = stream.text;
      msg.status = 'streaming';
    } else {
      this.messages.push(this.#liveReply(stream));
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
    };
  }

  #find(id: number): StoredMessage | undefined {
    for (let i = this.messages.length - 1; i >= 0; i--) {
      if (this.messages[i].id === id) return this.messages[i];
    }
    return undefined;
  }

  /** Insert or replace (the message of the same id, or the stand-in `replacing`) if `chatId` is on screen. */
  #upsert(chatId: number, message: StoredMessage, replacing?: number): void {
    if (this.activeChatId !== chatId) return;
    const index = this.messages.findIndex((m) => m.id === message.id || m.id === replacing);
    if (index >= 0) this.messages[index] = message;
    else this.messages.push(message);
  }
}
