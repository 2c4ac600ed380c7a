import type { UpdateProgress } from '../../src/ipc/bindings';
import { installPercent, installStateText } from '../../src/lib/updates.svelte';
import { table } from './helpers';

table<UpdateProgress | null, number | null>('installPercent: how far an update got', installPercent, [
  [null, 0],
  [{ stage: 'downloading', downloaded: 0, total: 1000, attempt: 1 }, 0],
  [{ stage: 'downloading', downloaded: 333, total: 1000, attempt: 1 }, 33],
  [{ stage: 'downloading', downloaded: 1000, total: 1000, attempt: 1 }, 100],
  // A server that gives no size: no percentage to show.
  [{ stage: 'downloading', downloaded: 5000, total: null, attempt: 1 }, null],
  [{ stage: 'installing' }, 100],
]);

table<UpdateProgress | null, string>('installStateText: where an install is, in words', installStateText, [
  [null, 'Starting the download…'],
  [{ stage: 'downloading', downloaded: 1_500_000, total: 48_210_000, attempt: 1 }, 'Downloading… 1.5 MB of 48.2 MB'],
  [{ stage: 'downloading', downloaded: 5000, total: null, attempt: 1 }, 'Downloading… 5.0 KB'],
  // A download cut off on the way starts again: the words say so.
  [{ stage: 'downloading', downloaded: 0, total: 48_210_000, attempt: 2 }, 'The download was cut off; downloading again (try 2)… 0 B of 48.2 MB'],
  [{ stage: 'installing' }, 'Signature checked. Installing… (your system may ask for your password)'],
]);
