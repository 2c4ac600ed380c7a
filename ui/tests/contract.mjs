// ui/src/ipc/contract.json (generated from Rust) with its values as the backend's IPC sends them,
// for the tests' fake and mock backends. The generator widens f32 fields to f64 on the way
// (0.8 becomes 0.800000011920929) while the IPC writes each f32 as its shortest decimal (0.8), so
// every number that is an f32 is read back as that shortest decimal.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The shortest decimal that is the same f32 as `n` when `n` is an f32; any other number as it is. */
function asF32(n) {
  if (Number.isInteger(n) || Math.fround(n) !== n) return n;
  for (let digits = 1; digits <= 9; digits++) {
    const short = Number(n.toPrecision(digits));
    if (Math.fround(short) === n) return short;
  }
  return n;
}

function asSent(value) {
  if (typeof value === 'number') return asF32(value);
  if (Array.isArray(value)) return value.map(asSent);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asSent(v)]));
  return value;
}

// (Not `new URL(…, import.meta.url)`: Vite rewrites that pattern into an asset URL.)
const PATH = join(dirname(fileURLToPath(import.meta.url)), '../src/ipc/contract.json');

/** contract.json's data, numbers as the IPC sends them. */
export const CONTRACT = asSent(JSON.parse(readFileSync(PATH, 'utf8')));
