import type { ChatEvent, ChatSummary, ModelInfo, StoredMessage } from '../ipc/bindings';
import type { HearthApi } from '../ipc/client';
import { DeltaBatcher, animationFrames, type FrameScheduler } from './batcher';
import { errorMessage } from './format';

/** Bookkeeping for the one reply being generated (not reactive; the UI reads `messages`). */
type Stream = {
  chatId: number;
  messageId: number | null;
  model: string | null;
  /** All delta text handed over so far (used to restore the bubble after switching chats). */
  text: string;
  userSaved: boolean;
  done: boolean;
};

export type Generating = { chatId: number; stopping: boolean };

/**
 * How long to wait for the terminal channel event after `send_message` resolved. Tauri delivers
 * channel messages and the command response separately, so the response may win the race.
 */
export const TERMINAL_EVENT_GRACE_MS = 2000;

/** All chat-screen state plus the streaming logic; components only render it. */
export class ChatStore {
  chats = $state<ChatSummary[]>([]);
  activeChatId = $state<number | null>(null);
  /** Messages of the active chat, chronological. */
  messages = $state<StoredMessage[]>([]);
  model = $state<ModelInfo | null>(null);
  /** True once the first list_chats/active_model round trip ended (either way). */
  ready = $state(false);
  loadingMessages = $state(false);
  draft = $state('');
  error = $state<string | null>(null);
  generating = $state<Generating | null>(null);

  activeChat = $derived(this.chats.find((c) => c.id === this.activeChatId) ?? null);
  generatingHere = $derived(this.generating !== null && this.generating.chatId === this.activeChatId);
  canSend = $derived(this.draft.trim().length > 0 && this.generating === null);

  readonly #api: HearthApi;
  readonly #batcher: DeltaBatcher;
  #stream: Stream | null = null;
  #loadToken = 0;
  #graceTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(api: HearthApi, frames: FrameScheduler = animationFrames) {
    this.#api = api;
    this.#batcher = new DeltaBatcher((text) => this.#applyDelta(text), frames);
  }

  async init(): Promise<void> {
    const [chats, model] = await Promise.allSettled([this.#api.listChats(), this.#api.activeModel()]);
    if (model.status === 'fulfilled') this.model = model.value;
    else this.showError(model.reason);
    if (chats.status === 'fulfilled') {
      this.chats = chats.value;
      if (this.activeChatId === null && chats.value.length > 0) {
        await this.selectChat(chats.value[0].id);
      }
    } else {
      this.showError(chats.reason);
    }
    this.ready = true;
  }

  showError(error: unknown): void {
    this.error = errorMessage(error);
  }

  dismissError(): void {
    this.error = null;
  }

  async refreshChats(): Promise<void> {
    try {
      this.chats = await this.#api.listChats();
    } catch (e) {
      this.showError(e);
    }
  }

  async refreshModel(): Promise<void> {
    try {
      this.model = await this.#api.activeModel();
    } catch (e) {
      this.showError(e);
    }
  }

  async selectChat(chatId: number): Promise<void> {
    if (chatId === this.activeChatId) return;
    this.activeChatId = chatId;
    this.messages = [];
    await this.#loadMessages(chatId);
  }

  async newChat(): Promise<ChatSummary | null> {
    try {
      const chat = await this.#api.createChat();
      this.chats = [chat, ...this.chats.filter((c) => c.id !== chat.id)];
      this.#loadToken += 1; // drop any in-flight load of the previous chat
      this.activeChatId = chat.id;
      this.messages = [];
      this.loadingMessages = false;
      return chat;
    } catch (e) {
      this.showError(e);
      return null;
    }
  }

  /** Send the draft to the active chat (creating one if none). Resolves when the reply ended. */
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
    this.error = null;
    const stream: Stream = { chatId, messageId: null, model: null, text: '', userSaved: false, done: false };
    this.#stream = stream;
    this.generating = { chatId, stopping: false };

    try {
      await this.#api.sendMessage(chatId, content, (event) => this.#onEvent(stream, event));
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
      if (!stream.userSaved && this.draft === '') this.draft = content; // nothing was sent: keep the text
      if (!stream.done) await this.#abandon(stream);
      return false;
    }
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

  async #loadMessages(chatId: number): Promise<void> {
    const token = ++this.#loadToken;
    this.loadingMessages = true;
    try {
      const messages = await this.#api.listMessages(chatId);
      if (token !== this.#loadToken) return;
      this.messages = messages;
      this.#restoreStream();
    } catch (e) {
      if (token === this.#loadToken) this.showError(e);
    } finally {
      if (token === this.#loadToken) this.loadingMessages = false;
    }
  }

  #onEvent(stream: Stream, event: ChatEvent): void {
    if (stream.done || stream !== this.#stream) return;
    switch (event.event) {
      case 'userSaved': {
        stream.userSaved = true;
        this.#upsert(stream.chatId, event.data.message);
        void this.refreshChats(); // the backend may have titled the chat from this message
        break;
      }
      case 'replyStarted': {
        stream.messageId = event.data.messageId;
        stream.model = event.data.model;
        this.#upsert(stream.chatId, this.#placeholder(stream));
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
        if (event.data.message) this.#upsert(stream.chatId, event.data.message);
        else if (stream.messageId !== null && this.activeChatId === stream.chatId) {
          this.messages = this.messages.filter((m) => m.id !== stream.messageId);
        }
        this.showError(event.data.error);
        this.#finish(stream);
        break;
      }
    }
  }

  #applyDelta(text: string): void {
    const stream = this.#stream;
    if (!stream || stream.done) return;
    stream.text += text;
    if (stream.messageId === null || this.activeChatId !== stream.chatId) return;
    const msg = this.#find(stream.messageId);
    if (msg) msg.content += text;
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
      this.messages.push(this.#placeholder(stream));
    }
  }

  #placeholder(stream: Stream): StoredMessage {
    return {
      id: stream.messageId ?? -1,
      chatId: stream.chatId,
      role: 'assistant',
      content: stream.text,
      status: 'streaming',
      createdAt: Date.now(),
      model: stream.model,
      stats: null,
      parentId: null,
      siblings: stream.messageId === null ? [] : [stream.messageId],
    };
  }

  #find(id: number): StoredMessage | undefined {
    for (let i = this.messages.length - 1; i >= 0; i--) {
      if (this.messages[i].id === id) return this.messages[i];
    }
    return undefined;
  }

  /** Insert or replace a message of `chatId` if that chat is on screen. */
  #upsert(chatId: number, message: StoredMessage): void {
    if (this.activeChatId !== chatId) return;
    const index = this.messages.findIndex((m) => m.id === message.id);
    if (index >= 0) this.messages[index] = message;
    else this.messages.push(message);
  }
}
