// Export and import of chats: the backend opens the system's file dialogs; the test says what the user picks
// (`exportDir`, `importFile`; null: the dialog is cancelled) and finds what was written in `exported`.
import type { ExportFormat, ImportReport } from '../../../src/ipc/bindings';
import { findChat, store, summary } from './history';
import { argsRefused, type Handlers } from './ipc';
import { state, type Chat } from './state';
import { clone, variants } from './util';

const FORMATS = variants<ExportFormat>({ json: true, markdown: true });

/** The file name the backend proposes for a chat (transfer.rs' file_stem). */
function fileStem(title: string) {
  const stem = title.replace(/[^\p{L}\p{N}-]/gu, ' ').split(/\s+/).filter(Boolean).join(' ');
  return stem ? [...stem].slice(0, 60).join('') : 'chat';
}

function exportChats(chatIds: number[] | null, format: ExportFormat) {
  if (!(chatIds === null || chatIds.every(Number.isInteger)) || !FORMATS.includes(format)) {
    argsRefused('export_chats', 'chatIds', [`bad arguments ${JSON.stringify({ chatIds, format })}`]);
  }
  const chats = (chatIds ?? []).map(findChat);
  if (state.exportDir === null) return null;
  const name = chats.length === 1 ? fileStem(chats[0].title) : 'hearth-chats';
  const path = `${state.exportDir}/${name}.${format === 'json' ? 'json' : 'md'}`;
  state.exported.push({ path, chatIds: clone(chatIds), format });
  return path;
}

/** Adds the file's chats with new ids and their own dates, each a linear history. */
function importChats(): ImportReport | null {
  const file = state.importFile;
  if (file === null) return null;
  const imported = (file.chats ?? []).map((c) => {
    const chat: Chat = {
      id: state.nextId++, title: c.title, updatedAt: c.updatedAt, pinned: c.pinned ?? false, systemPrompt: c.systemPrompt ?? '', leafId: null,
      model: { kind: 'local', model: null },
    };
    state.chats.push(chat);
    let parentId: number | null = null;
    for (const [role, content] of c.messages ?? []) {
      const id: number = state.nextId++;
      store({ id, chatId: chat.id, parentId, role, content, status: 'complete', createdAt: c.updatedAt, model: null, stats: null, tool: null, toolCalls: [], attachments: [], passages: [] });
      chat.leafId = parentId = id;
    }
    return summary(chat);
  });
  return { imported, skipped: clone(file.skipped ?? []), notes: clone(file.notes ?? []) };
}

export const transferCommands = { exportChats, importChats } satisfies Partial<Handlers>;
