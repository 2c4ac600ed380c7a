//! Builds hostile GGUF files from the real model: one metadata entry replaced or added, the
//! tensor data moved to the next aligned offset, everything else byte for byte.

pub const U8: u32 = 0;
pub const U32: u32 = 4;
pub const STRING: u32 = 8;
pub const ARRAY: u32 = 9;
const ALIGNMENT: usize = 32;

pub fn string(text: &str) -> Vec<u8> {
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out
}

/// An array value: item type, count, items.
pub fn array(item_ty: u32, count: u64, items: &[u8]) -> Vec<u8> {
    let mut out = item_ty.to_le_bytes().to_vec();
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(items);
    out
}

/// Arrays of arrays `depth` deep around an empty array of bytes.
pub fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(depth * 12 + 12);
    for _ in 0..depth {
        out.extend_from_slice(&ARRAY.to_le_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
    }
    out.extend_from_slice(&U8.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out
}

/// `model` with `key` set to a value of type `ty` (encoded as `value`), added if absent.
pub fn with_kv(model: &[u8], key: &str, ty: u32, value: &[u8]) -> Vec<u8> {
    let mut entry = string(key);
    entry.extend_from_slice(&ty.to_le_bytes());
    entry.extend_from_slice(value);
    edit(model, key, Some(entry))
}

/// `model` without the entry `key`.
pub fn without_kv(model: &[u8], key: &str) -> Vec<u8> {
    edit(model, key, None)
}

fn edit(model: &[u8], key: &str, entry: Option<Vec<u8>>) -> Vec<u8> {
    let mut r = Walk { bytes: model, pos: 24 };
    let n_tensors = u64::from_le_bytes(model[8..16].try_into().unwrap());
    let n_kv = u64::from_le_bytes(model[16..24].try_into().unwrap());
    let mut out = model[..24].to_vec();
    let mut found = false;
    for _ in 0..n_kv {
        let start = r.pos;
        let name = r.string();
        let ty = r.u32();
        r.value(ty);
        if name == key {
            found = true;
            out.extend_from_slice(entry.as_deref().unwrap_or_default());
        } else {
            out.extend_from_slice(&model[start..r.pos]);
        }
    }
    let count = n_kv + u64::from(!found && entry.is_some()) - u64::from(found && entry.is_none());
    if !found && let Some(entry) = &entry {
        out.extend_from_slice(entry);
    }
    out[16..24].copy_from_slice(&count.to_le_bytes());
    let infos = r.pos;
    for _ in 0..n_tensors {
        r.string();
        let dims = r.u32() as usize;
        r.pos += dims * 8 + 4 + 8;
    }
    out.extend_from_slice(&model[infos..r.pos]);
    let data = r.pos.div_ceil(ALIGNMENT) * ALIGNMENT;
    out.resize(out.len().div_ceil(ALIGNMENT) * ALIGNMENT, 0);
    out.extend_from_slice(&model[data..]);
    out
}

struct Walk<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Walk<'_> {
    fn u32(&mut self) -> u32 {
        self.pos += 4;
        u32::from_le_bytes(self.bytes[self.pos - 4..self.pos].try_into().unwrap())
    }

    fn u64(&mut self) -> u64 {
        self.pos += 8;
        u64::from_le_bytes(self.bytes[self.pos - 8..self.pos].try_into().unwrap())
    }

    fn string(&mut self) -> String {
        let len = self.u64() as usize;
        self.pos += len;
        String::from_utf8_lossy(&self.bytes[self.pos - len..self.pos]).into_owned()
    }

    fn value(&mut self, ty: u32) {
        match ty {
            0 | 1 | 7 => self.pos += 1,
            2 | 3 => self.pos += 2,
            4..=6 => self.pos += 4,
            10..=12 => self.pos += 8,
            STRING => {
                self.string();
            }
            ARRAY => {
                let item = self.u32();
                for _ in 0..self.u64() {
                    self.value(item);
                }
            }
            other => panic!("type {other}"),
        }
    }
}
