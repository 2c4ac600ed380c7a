// Contract placeholder: this file will be regenerated from Rust (ts-rs). Do not edit by hand.
export type Role = "system" | "user" | "assistant";
export type MessageStatus = "streaming" | "complete" | "stopped" | "interrupted" | "failed";
export type ReplyStats = { promptTokens: number; cachedTokens: number; completionTokens: number; ttftMs: number; decodeTps: number };
export type ChatSummary = { id: number; title: string; updatedAt: number };
export type StoredMessage = { id: number; chatId: number; role: Role; content: string; status: MessageStatus; createdAt: number; model: string | null; stats: ReplyStats | null };
export type ModelInfo = { name: string; path: string; sizeBytes: number };
export type IpcErrorKind = "notFound" | "invalidInput" | "noModel" | "busy" | "engine" | "store";
export type IpcError = { kind: IpcErrorKind; message: string };
export type ChatEvent =
  | { event: "userSaved"; data: { message: StoredMessage } }
  | { event: "replyStarted"; data: { messageId: number; model: string } }
  | { event: "delta"; data: { text: string } }
  | { event: "finished"; data: { message: StoredMessage } }
  | { event: "failed"; data: { error: IpcError; message: StoredMessage | null } };
