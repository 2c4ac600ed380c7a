// Generated from the Rust types by `UPDATE_BINDINGS=1 cargo test -p hearth --test ipc_contract`.
// Do not edit by hand.

export type Role = "system" | "user" | "assistant";

export type MessageStatus = "streaming" | "complete" | "stopped" | "interrupted" | "failed";

export type ReplyStats = { 
/**
 * Tokens in the rendered prompt.
 */
promptTokens: number, 
/**
 * Prompt tokens reused from the KV cache instead of being prefilled again.
 */
cachedTokens: number, completionTokens: number, 
/**
 * Time to first token, milliseconds.
 */
ttftMs: number, 
/**
 * Decode speed after the first token, tokens per second.
 */
decodeTps: number, };

export type ChatSummary = { id: number, title: string, 
/**
 * Unix milliseconds of the last message (or creation).
 */
updatedAt: number, };

export type StoredMessage = { id: number, chatId: number, role: Role, content: string, status: MessageStatus, 
/**
 * Unix milliseconds.
 */
createdAt: number, 
/**
 * The model that wrote an assistant reply.
 */
model: string | null, stats: ReplyStats | null, };

export type ModelInfo = { name: string, path: string, sizeBytes: number, };

export type IpcErrorKind = "notFound" | "invalidInput" | "noModel" | "busy" | "engine" | "store";

export type IpcError = { kind: IpcErrorKind, message: string, };

export type MessageSaved = { message: StoredMessage, };

export type ReplyStarted = { messageId: number, model: string, };

export type TextDelta = { text: string, };

export type FailedReply = { error: IpcError, 
/**
 * The partial reply as saved, if one had started.
 */
message: StoredMessage | null, };

export type ChatEvent = { "event": "userSaved", "data": MessageSaved } | { "event": "replyStarted", "data": ReplyStarted } | { "event": "delta", "data": TextDelta } | { "event": "finished", "data": MessageSaved } | { "event": "failed", "data": FailedReply };
