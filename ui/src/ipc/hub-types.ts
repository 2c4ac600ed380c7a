// The model manager's IPC types (Hugging Face search, downloads, the local library): generated in
// bindings.ts from src-tauri's ipc/hub commands; re-exported here for the model manager's imports.
export type {
  Download,
  DownloadState,
  FitEstimate,
  FitVerdict,
  HubRepo,
  HubTokenStatus,
  ImportMode,
  LibraryModel,
  ModelFacts,
  ModelSource,
  RepoQuant,
} from './bindings';
import type { IpcErrorKind } from './bindings';

/** Kept as a name for the hub's error kinds; bindings' IpcErrorKind has them all. */
export type HubIpcErrorKind = IpcErrorKind;
