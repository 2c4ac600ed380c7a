import type { StoredMessage } from '../../src/ipc/bindings';
import { PENDING_USER_ID, addsSibling, branchPosition, canContinue, newReplyVersion, pathDuringTurn, withPendingSend, type TurnRequest } from '../../src/lib/turns';
import { table } from './helpers';
import { stats } from './reply-fixtures';

function msg(id: number, role: StoredMessage['role'], siblings: number[] = [id]): StoredMessage {
  return { id, chatId: 1, role, content: `m${id}`, status: 'complete', createdAt: 0, model: null, stats: null, parentId: id - 1 || null, siblings, tool: null, toolCalls: [], attachments: [], passages: [] };
}

const PATH = [msg(1, 'user'), msg(2, 'assistant'), msg(3, 'user', [3, 7]), msg(4, 'assistant')];

/** The ids on screen while `turn` starts, and the pending edit's siblings and text when there is one. */
function during(turn: TurnRequest) {
  const path = pathDuringTurn(PATH, turn);
  const pending = path.find((m) => m.id === PENDING_USER_ID);
  return { ids: path.map((m) => m.id), pending: pending && { siblings: pending.siblings, content: pending.content } };
}

table('pathDuringTurn: what stays on screen while a turn starts', during, [
  [{ kind: 'send', content: 'x', attachments: [] }, { ids: [1, 2, 3, 4], pending: undefined }],
  [{ kind: 'continue', messageId: 4 }, { ids: [1, 2, 3, 4], pending: undefined }],
  [{ kind: 'regenerate', messageId: 4 }, { ids: [1, 2, 3], pending: undefined }],
  [{ kind: 'regenerate', messageId: 2 }, { ids: [1], pending: undefined }],
  [{ kind: 'edit', messageId: 3, content: 'new' }, { ids: [1, 2, PENDING_USER_ID], pending: { siblings: [3, 7, PENDING_USER_ID], content: 'new' } }],
  [{ kind: 'edit', messageId: 1, content: 'first' }, { ids: [PENDING_USER_ID], pending: { siblings: [1, PENDING_USER_ID], content: 'first' } }],
  [{ kind: 'edit', messageId: 99, content: 'gone' }, { ids: [1, 2, 3, 4], pending: undefined }],
  // A branch is a new version of the reply, as a regeneration is: it appears with replyStarted.
  [{ kind: 'branch', messageId: 4, at: 3, token: 1017 }, { ids: [1, 2, 3], pending: undefined }],
  [{ kind: 'branch', messageId: 2, at: 0, token: 7 }, { ids: [1], pending: undefined }],
  // Calls run again keep their reply; their results and the answer to them follow.
  [{ kind: 'rerun', messageId: 2 }, { ids: [1, 2], pending: undefined }],
  [{ kind: 'rerun', messageId: 99 }, { ids: [1, 2, 3, 4], pending: undefined }],
]);

table(
  'withPendingSend: a sent message on show under the last one, while the chat\'s model loads',
  (path: StoredMessage[]) => withPendingSend(path, 1, 'hi', []).map((m) => [m.id, m.role, m.content, m.parentId, m.siblings]),
  [
    [PATH, [...PATH.map((m) => [m.id, m.role, m.content, m.parentId, m.siblings]), [PENDING_USER_ID, 'user', 'hi', 4, [PENDING_USER_ID]]]],
    [[], [[PENDING_USER_ID, 'user', 'hi', null, [PENDING_USER_ID]]]],
  ],
);

table('addsSibling', addsSibling, [
  [{ kind: 'send', content: 'x', attachments: [] }, false],
  [{ kind: 'edit', messageId: 1, content: 'x' }, true],
  [{ kind: 'regenerate', messageId: 2 }, true],
  [{ kind: 'continue', messageId: 2 }, false],
  [{ kind: 'branch', messageId: 2, at: 1, token: 5 }, true],
  [{ kind: 'rerun', messageId: 2 }, true],
]);

table('newReplyVersion: a new version of a reply beside it', newReplyVersion, [
  [{ kind: 'send', content: 'x', attachments: [] }, false],
  [{ kind: 'edit', messageId: 1, content: 'x' }, false],
  [{ kind: 'regenerate', messageId: 2 }, true],
  [{ kind: 'continue', messageId: 2 }, false],
  [{ kind: 'branch', messageId: 2, at: 1, token: 5 }, true],
  [{ kind: 'rerun', messageId: 2 }, false],
]);

type Reply = Pick<StoredMessage, 'role' | 'status' | 'stats'>;
table<Reply, boolean>('canContinue: a reply that ended before the model ended it', canContinue, [
  [{ role: 'assistant', status: 'complete', stats: stats() }, false],
  [{ role: 'assistant', status: 'complete', stats: null }, false],
  [{ role: 'assistant', status: 'complete', stats: stats({ cutAtLimit: true }) }, true],
  [{ role: 'assistant', status: 'stopped', stats: stats() }, true],
  [{ role: 'assistant', status: 'interrupted', stats: null }, true],
  [{ role: 'assistant', status: 'failed', stats: null }, true],
  [{ role: 'assistant', status: 'streaming', stats: null }, false],
  [{ role: 'user', status: 'stopped', stats: null }, false],
]);

table('branchPosition: "‹ 2/3 ›" and the neighbours', (m: Pick<StoredMessage, 'id' | 'siblings'>) => branchPosition(m), [
  [{ id: 5, siblings: [5] }, { index: 1, count: 1, previous: null, next: null }],
  [{ id: 5, siblings: [5, 8, 9] }, { index: 1, count: 3, previous: null, next: 8 }],
  [{ id: 8, siblings: [5, 8, 9] }, { index: 2, count: 3, previous: 5, next: 9 }],
  [{ id: 9, siblings: [5, 8, 9] }, { index: 3, count: 3, previous: 8, next: null }],
]);
