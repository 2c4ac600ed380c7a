//! Reads and checks a GGUF file's header in Rust before llama.cpp sees it.
//!
//! llama.cpp reports every bad file as the same null result (and can abort() on crafted metadata),
//! so Hearth parses the header itself: magic, version, every key/value, every tensor description,
//! and checks that all tensor data lies inside the file. The result, [`ValidatedGguf`], is the only
//! thing the engine will load. The same parser reads a header fetched from the network
//! ([`parse_prefix`]) so a model's facts are known before it is downloaded.

mod facts;
pub mod fit;

pub use facts::{ASSUMED_CONTEXT_LENGTH, ModelFacts, ModelShape, file_type_name};

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 4] = b"GGUF";
const DEFAULT_ALIGNMENT: u64 = 32;
/// Caps that no real model reaches but that stop absurd counts from allocating gigabytes.
const MAX_TENSORS: u64 = 1 << 20;
const MAX_KV: u64 = 1 << 20;
const MAX_DIMS: u32 = 4;
/// The longest metadata key and tensor name read (ggml's own names stop at 63 bytes).
const MAX_NAME: u64 = 1 << 10;
/// The longest metadata string read (chat templates run to a few hundred KiB).
const MAX_STRING: u64 = 32 << 20;
/// GGUF's value types that this file names.
const STRING: u32 = 8;
const ARRAY: u32 = 9;
const U32: u32 = 4;
const I32: u32 = 5;
const F32: u32 = 6;

/// Keys llama.cpp reads with a fixed type and asserts on (an abort, not an error) when a file
/// holds something else: (key, value type, item type of an array).
const EXPECTED_TYPES: &[(&str, u32, Option<u32>)] = &[
    ("general.architecture", STRING, None),
    ("tokenizer.ggml.model", STRING, None),
    ("tokenizer.ggml.pre", STRING, None),
    ("tokenizer.chat_template", STRING, None),
    ("tokenizer.ggml.tokens", ARRAY, Some(STRING)),
    ("tokenizer.ggml.merges", ARRAY, Some(STRING)),
    ("tokenizer.ggml.scores", ARRAY, Some(F32)),
    ("tokenizer.ggml.token_type", ARRAY, Some(I32)),
];

/// The architecture's hyperparameters (`<arch>.context_length`, `<arch>.block_count` …) are
/// whole numbers llama.cpp keeps in 32 bits and hands out as `int32`: outside 0..=i32::MAX they
/// come back negative, and the bindings panic on them.
fn check_ranges(metadata: &BTreeMap<String, MetaValue>) -> Result<(), String> {
    let Some(MetaValue::Str(arch)) = metadata.get("general.architecture") else { return Ok(()) };
    let prefix = format!("{arch}.");
    for (key, value) in metadata.range(prefix.clone()..).take_while(|(key, _)| key.starts_with(&prefix)) {
        if let MetaValue::Int(n) = value
            && !(0..=i128::from(i32::MAX)).contains(n)
        {
            return Err(format!("{key} is {n}, outside 0 to {} (llama.cpp cannot use it)", i32::MAX));
        }
    }
    Ok(())
}

/// Refuses a value of the wrong type under a key llama.cpp would assert on.
fn check_type(key: &str, ty: u32, item_ty: Option<u32>) -> Result<(), String> {
    let Some(&(_, want, want_item)) = EXPECTED_TYPES.iter().find(|(k, ..)| *k == key) else {
        return Ok(());
    };
    if ty == want && (want_item.is_none() || item_ty == want_item) {
        return Ok(());
    }
    let name = |t: u32| match t {
        STRING => "a string".to_owned(),
        ARRAY => "an array".to_owned(),
        U32 | I32 => "an integer".to_owned(),
        F32 => "a float".to_owned(),
        other => format!("type {other}"),
    };
    let wanted = match want_item {
        Some(item) => format!("an array of {}s", name(item).trim_start_matches("a ").trim_start_matches("an ")),
        None => name(want),
    };
    let found = match item_ty {
        Some(item) => format!("an array of type {item}"),
        None => name(ty),
    };
    Err(format!("{key} must be {wanted} but is {found} (llama.cpp would abort on it)"))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum GgufError {
    #[error("{path} cannot be read: {reason}")]
    Io { path: String, reason: String },
    #[error("{path} is {kind}, not a model file: pick a .gguf file")]
    NotAFile { path: String, kind: String },
    #[error("{path} is not a GGUF model file (it does not start with \"GGUF\")")]
    NotGguf { path: String },
    #[error("{path} is truncated: it ends at byte {len} but its header needs at least byte {needed}; download it again")]
    Truncated { path: String, len: u64, needed: u64 },
    #[error("{path} uses GGUF version {version}, which Hearth cannot read (supported: 2 and 3)")]
    UnsupportedVersion { path: String, version: u32 },
    #[error("{path} is corrupt: {detail}")]
    Corrupt { path: String, detail: String },
    /// Only from [`parse_prefix`]: the header goes on past the bytes given.
    #[error("{path}: the header goes on past the first {have} bytes")]
    NeedMore { path: String, have: u64 },
}

/// A file whose GGUF header parsed and whose tensor data lies within the file.
#[derive(Debug, Clone)]
pub struct ValidatedGguf {
    pub path: PathBuf,
    pub file_size: u64,
    pub version: u32,
    pub tensor_count: u64,
    /// Elements of all tensors: the parameter count.
    pub parameters: u64,
    /// Metadata strings and numbers (arrays are omitted).
    pub metadata: BTreeMap<String, MetaValue>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
    /// An array: only its element count is kept.
    Array(u64),
}

impl ValidatedGguf {
    pub fn architecture(&self) -> Option<&str> {
        self.str("general.architecture")
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        match self.metadata.get(key) {
            Some(MetaValue::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, key: &str) -> Option<i128> {
        match self.metadata.get(key) {
            Some(MetaValue::Int(i)) => Some(*i),
            _ => None,
        }
    }
}

/// Whether a file named `name` is a vision model's image projector (`mmproj-*.gguf`, as
/// llama.cpp's converter names them), which is loaded beside its model, not chatted with.
pub fn is_projector_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.starts_with("mmproj") && name.ends_with(".gguf")
}

/// Parses and checks the header of the GGUF file at `path`.
pub fn validate(path: &Path) -> Result<ValidatedGguf, GgufError> {
    let shown = path.display().to_string();
    let io = |e: std::io::Error| GgufError::Io { path: shown.clone(), reason: e.to_string() };
    // Before it is opened: opening a FIFO blocks until something writes to it.
    let kind = std::fs::metadata(path).map_err(io)?.file_type();
    if !kind.is_file() {
        return Err(GgufError::NotAFile { path: shown, kind: file_kind(kind).into() });
    }
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut r = Reader { inner: BufReader::with_capacity(1 << 16, file), pos: 0, len, available: len, path: &shown };
    r.parse().map(|parsed| parsed.into_validated(path.to_path_buf(), len))
}

/// What a path that is not a regular file is, in words.
fn file_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    match kind {
        k if k.is_dir() => "a folder",
        k if k.is_fifo() => "a named pipe (FIFO)",
        k if k.is_socket() => "a socket",
        k if k.is_block_device() || k.is_char_device() => "a device",
        _ => "not a regular file",
    }
}

/// Parses a header from the first bytes of a `file_size`-byte file (a range fetched over HTTP).
/// [`GgufError::NeedMore`] asks for more bytes; every other error is the file's.
pub fn parse_prefix(bytes: &[u8], file_size: u64, name: &str) -> Result<ValidatedGguf, GgufError> {
    let mut r = Reader { inner: bytes, pos: 0, len: file_size, available: bytes.len() as u64, path: name };
    r.parse().map(|parsed| parsed.into_validated(PathBuf::from(name), file_size))
}

struct Reader<'a, R> {
    inner: R,
    pos: u64,
    /// The file's length, which the header's claims are checked against.
    len: u64,
    /// How much of it can be read (less than `len` for a prefix).
    available: u64,
    path: &'a str,
}

struct Parsed {
    version: u32,
    tensor_count: u64,
    parameters: u64,
    metadata: BTreeMap<String, MetaValue>,
}

impl Parsed {
    fn into_validated(self, path: PathBuf, file_size: u64) -> ValidatedGguf {
        let Parsed { version, tensor_count, parameters, metadata } = self;
        ValidatedGguf { path, file_size, version, tensor_count, parameters, metadata }
    }
}

impl<R: Read> Reader<'_, R> {
    fn parse(&mut self) -> Result<Parsed, GgufError> {
        if self.len < 4 || self.bytes(4)? != MAGIC {
            return Err(GgufError::NotGguf { path: self.path.into() });
        }
        let version = self.u32()?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::UnsupportedVersion { path: self.path.into(), version });
        }
        let tensor_count = self.u64()?;
        let kv_count = self.u64()?;
        if tensor_count > MAX_TENSORS || kv_count > MAX_KV {
            return Err(self.corrupt(format!("it claims {tensor_count} tensors and {kv_count} metadata entries")));
        }
        let mut metadata = BTreeMap::new();
        for _ in 0..kv_count {
            let key = self.string(MAX_NAME, "a metadata key")?;
            let ty = self.u32()?;
            if ty != ARRAY {
                check_type(&key, ty, None).map_err(|detail| self.corrupt(detail))?;
            }
            let value = self.value(ty, &key)?;
            metadata.insert(key, value);
        }
        check_ranges(&metadata).map_err(|detail| self.corrupt(detail))?;
        let alignment = match metadata.get("general.alignment") {
            Some(MetaValue::Int(a)) if *a > 0 && (*a as u64).is_power_of_two() => *a as u64,
            Some(other) => return Err(self.corrupt(format!("invalid general.alignment {other:?}"))),
            None => DEFAULT_ALIGNMENT,
        };
        let mut tensors = Vec::with_capacity(tensor_count as usize);
        for _ in 0..tensor_count {
            tensors.push(self.tensor_info()?);
        }
        let data_start = self.pos.div_ceil(alignment) * alignment;
        let mut parameters: u64 = 0;
        for t in &tensors {
            parameters = parameters.saturating_add(t.elements);
            if t.offset % alignment != 0 {
                return Err(self.corrupt(format!("tensor {} is misaligned", t.name)));
            }
            let end = data_start
                .checked_add(t.offset)
                .and_then(|start| start.checked_add(t.bytes.unwrap_or(0)))
                .ok_or_else(|| self.corrupt(format!("tensor {} has an impossible offset", t.name)))?;
            if end > self.len {
                return Err(GgufError::Truncated { path: self.path.into(), len: self.len, needed: end });
            }
        }
        Ok(Parsed { version, tensor_count, parameters, metadata })
    }

    fn tensor_info(&mut self) -> Result<TensorInfo, GgufError> {
        let name = self.string(MAX_NAME, "a tensor name")?;
        let n_dims = self.u32()?;
        if n_dims == 0 || n_dims > MAX_DIMS {
            return Err(self.corrupt(format!("tensor {name} has {n_dims} dimensions")));
        }
        let mut elements: u64 = 1;
        let mut row = 0;
        for i in 0..n_dims {
            let d = self.u64()?;
            if i == 0 {
                row = d;
            }
            elements = elements.checked_mul(d).ok_or_else(|| self.corrupt(format!("tensor {name} has absurd dimensions")))?;
        }
        let ty = self.u32()?;
        let offset = self.u64()?;
        let bytes = match block_layout(ty) {
            Some((block, size)) => {
                // ggml quantizes rows: a row must be whole blocks (llama.cpp refuses the file otherwise).
                if row % block != 0 {
                    return Err(self.corrupt(format!("tensor {name} does not fill whole blocks")));
                }
                Some((elements / block).checked_mul(size).ok_or_else(|| self.corrupt(format!("tensor {name} is impossibly large")))?)
            }
            // A type newer than this table: llama.cpp checks it; we still bound the offset.
            None if ty < 64 => None,
            None => return Err(self.corrupt(format!("tensor {name} has unknown type {ty}"))),
        };
        Ok(TensorInfo { name, offset, bytes, elements })
    }

    fn value(&mut self, ty: u32, key: &str) -> Result<MetaValue, GgufError> {
        Ok(match ty {
            0 => MetaValue::Int(self.bytes(1)?[0].into()),
            1 => MetaValue::Int((self.bytes(1)?[0] as i8).into()),
            2 => MetaValue::Int(u16::from_le_bytes(self.array()?).into()),
            3 => MetaValue::Int(i16::from_le_bytes(self.array()?).into()),
            4 => MetaValue::Int(self.u32()?.into()),
            5 => MetaValue::Int(i32::from_le_bytes(self.array()?).into()),
            6 => MetaValue::Float(f32::from_le_bytes(self.array()?).into()),
            7 => MetaValue::Bool(self.bytes(1)?[0] != 0),
            8 => MetaValue::Str(self.string(MAX_STRING, key)?),
            ARRAY => {
                let item_ty = self.u32()?;
                check_type(key, ARRAY, Some(item_ty)).map_err(|detail| self.corrupt(detail))?;
                let count = self.u64()?;
                let min_size = match item_ty {
                    0 | 1 | 7 => 1,
                    2 | 3 => 2,
                    4..=6 => 4,
                    8 | 10..=12 => 8,
                    // llama.cpp cannot read arrays of arrays; nesting them thousands deep also
                    // overflowed this parser's stack. One level is all there is.
                    ARRAY => return Err(self.corrupt(format!("{key} is an array of arrays, which llama.cpp cannot read"))),
                    _ => return Err(self.corrupt(format!("{key} has unknown array type {item_ty}"))),
                };
                self.need(count.saturating_mul(min_size))?;
                for _ in 0..count {
                    match item_ty {
                        // Only the count is kept: the strings are skipped, not held.
                        STRING => self.skip_string(key)?,
                        _ => drop(self.value(item_ty, key)?),
                    }
                }
                MetaValue::Array(count)
            }
            10 => MetaValue::Int(self.u64()?.into()),
            11 => MetaValue::Int(i64::from_le_bytes(self.array()?).into()),
            12 => MetaValue::Float(f64::from_le_bytes(self.array()?)),
            _ => return Err(self.corrupt(format!("{key} has unknown value type {ty}"))),
        })
    }

    /// A string of at most `cap` bytes; `what` names it in the error.
    fn string(&mut self, cap: u64, what: &str) -> Result<String, GgufError> {
        let len = self.string_len(cap, what)?;
        let bytes = self.bytes(len)?;
        String::from_utf8(bytes).map_err(|_| self.corrupt("a metadata string is not UTF-8".into()))
    }

    fn skip_string(&mut self, key: &str) -> Result<(), GgufError> {
        let len = self.string_len(MAX_STRING, key)?;
        self.need(len)?;
        let copied = std::io::copy(&mut (&mut self.inner).take(len), &mut std::io::sink());
        match copied {
            Ok(n) if n == len => {
                self.pos += len;
                Ok(())
            }
            Ok(_) => Err(GgufError::Truncated { path: self.path.into(), len: self.len, needed: self.pos + len }),
            Err(e) => Err(GgufError::Io { path: self.path.into(), reason: e.to_string() }),
        }
    }

    fn string_len(&mut self, cap: u64, what: &str) -> Result<u64, GgufError> {
        let len = self.u64()?;
        if len > cap {
            let most = if cap >= 1 << 20 { format!("{} MiB", cap >> 20) } else { format!("{} KiB", cap >> 10) };
            return Err(self.corrupt(format!("{what} holds a string of {len} bytes, more than the {most} Hearth reads")));
        }
        Ok(len)
    }

    fn u32(&mut self) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], GgufError> {
        self.need(N as u64)?;
        let mut buf = [0; N];
        self.read_exact(&mut buf)?;
        Ok(buf)
    }

    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, GgufError> {
        self.need(n)?;
        let mut buf = vec![0; n as usize];
        self.read_exact(&mut buf)?;
        Ok(buf)
    }

    /// Fails unless `n` more bytes exist (and can be read), before anything is allocated for them.
    fn need(&self, n: u64) -> Result<(), GgufError> {
        match self.pos.checked_add(n) {
            Some(end) if end <= self.available => Ok(()),
            Some(end) if end <= self.len => Err(GgufError::NeedMore { path: self.path.into(), have: self.available }),
            _ => Err(GgufError::Truncated { path: self.path.into(), len: self.len, needed: self.pos.saturating_add(n) }),
        }
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), GgufError> {
        self.inner.read_exact(buf).map_err(|e| GgufError::Io { path: self.path.into(), reason: e.to_string() })?;
        self.pos += buf.len() as u64;
        Ok(())
    }

    fn corrupt(&self, detail: String) -> GgufError {
        GgufError::Corrupt { path: self.path.into(), detail }
    }
}

struct TensorInfo {
    name: String,
    offset: u64,
    bytes: Option<u64>,
    elements: u64,
}

/// (elements per block, bytes per block) of each ggml tensor type, from ggml.h's type table.
fn block_layout(ty: u32) -> Option<(u64, u64)> {
    Some(match ty {
        0 => (1, 4),      // F32
        1 => (1, 2),      // F16
        2 => (32, 18),    // Q4_0
        3 => (32, 20),    // Q4_1
        6 => (32, 22),    // Q5_0
        7 => (32, 24),    // Q5_1
        8 => (32, 34),    // Q8_0
        9 => (32, 36),    // Q8_1
        10 => (256, 84),  // Q2_K
        11 => (256, 110), // Q3_K
        12 => (256, 144), // Q4_K
        13 => (256, 176), // Q5_K
        14 => (256, 210), // Q6_K
        15 => (256, 292), // Q8_K
        16 => (256, 66),  // IQ2_XXS
        17 => (256, 74),  // IQ2_XS
        18 => (256, 98),  // IQ3_XXS
        19 => (256, 50),  // IQ1_S
        20 => (32, 18),   // IQ4_NL
        21 => (256, 110), // IQ3_S
        22 => (256, 82),  // IQ2_S
        23 => (256, 136), // IQ4_XS
        24 => (1, 1),     // I8
        25 => (1, 2),     // I16
        26 => (1, 4),     // I32
        27 => (1, 8),     // I64
        28 => (1, 8),     // F64
        29 => (256, 56),  // IQ1_M
        30 => (1, 2),     // BF16
        34 => (256, 54),  // TQ1_0
        35 => (256, 66),  // TQ2_0
        39 => (32, 17),   // MXFP4
        _ => return None,
    })
}
