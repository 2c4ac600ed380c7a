//! Each chat's KV cache, kept while the engine serves another chat: in RAM under a byte budget
//! (least recently used first out), spilled to disk when evicted, unloaded or at quit, and read
//! back when the chat answers again — after a switch, or after a restart.
//!
//! A state file is written whole (beside, then renamed) with a versioned header, the key it is
//! valid for (the model's content, the KV cache's type and layout, the context size) and a
//! SHA-256 of everything before it. Anything that does not match — damaged, truncated, another
//! model or version, a model file replaced under the same name — is dropped with a log line and
//! the prompt is prefilled: llama.cpp only ever reads bytes it wrote for this very model.

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use hearth_core::{CacheBudgets, PromptSource};

use crate::checkpoints::Checkpoint;

/// A conversation, as the app names it (its chat id).
pub type ConversationId = i64;

const MAGIC: &[u8; 8] = b"HEARTHKV";
/// Bumped whenever the layout below or llama.cpp's state format may have changed.
const FORMAT_VERSION: u32 = 2;
/// How much of a model file its identity reads: the header and first tensors, and the end.
const HEAD_BYTES: u64 = 8 << 20;
const TAIL_BYTES: u64 = 1 << 20;

/// Where and how much: the folder is set by the app for its engine process (`HEARTH_KV_DIR`); the
/// budgets are the user's ([`CacheBudgets`], sent when set), `HEARTH_KV_*_MB` until then.
#[derive(Debug, Clone, PartialEq)]
pub struct KvConfig {
    /// Where states spill; `None`: RAM only.
    pub dir: Option<PathBuf>,
    pub ram_budget: u64,
    pub disk_budget: u64,
    /// For models kept in memory after another is loaded (`crate::kept`).
    pub models_budget: u64,
}

pub const KV_DIR_ENV: &str = "HEARTH_KV_DIR";
pub const KV_RAM_ENV: &str = "HEARTH_KV_RAM_MB";
pub const KV_DISK_ENV: &str = "HEARTH_KV_DISK_MB";

impl KvConfig {
    pub fn from_env() -> Self {
        let defaults = CacheBudgets::default();
        let megabytes = |var: &str, default: u32| {
            std::env::var(var).ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(u64::from(default)) << 20
        };
        KvConfig {
            dir: std::env::var_os(KV_DIR_ENV).map(PathBuf::from),
            ram_budget: megabytes(KV_RAM_ENV, defaults.ram_mb),
            disk_budget: megabytes(KV_DISK_ENV, defaults.disk_mb),
            models_budget: defaults.models_ram_bytes(),
        }
    }

    pub fn set_budgets(&mut self, budgets: CacheBudgets) {
        self.ram_budget = budgets.ram_bytes();
        self.disk_budget = budgets.disk_bytes();
        self.models_budget = budgets.models_ram_bytes();
    }
}

/// One conversation's cache: the tokens in it, in order, llama.cpp's bytes for them, and the
/// checkpoints it can be cut back to (a model whose cache cannot be cut back freely).
#[derive(Debug, Clone, PartialEq)]
pub struct SavedState {
    pub tokens: Vec<i32>,
    pub data: Vec<u8>,
    pub checkpoints: Vec<Checkpoint>,
}

impl SavedState {
    fn bytes(&self) -> u64 {
        (self.data.len() + self.tokens.len() * 4 + self.checkpoints.iter().map(|c| c.data.len() + 16).sum::<usize>()) as u64
    }
}

/// What makes a state valid for a loaded model: its content and how its cache is laid out.
pub fn state_key(model: &Path, layout: &str) -> std::io::Result<String> {
    Ok(layout_key(&model_key(model)?, layout))
}

/// [`state_key`] from the model's content key, already computed.
pub fn layout_key(model_key: &str, layout: &str) -> String {
    format!("v{FORMAT_VERSION};model={model_key};{layout}")
}

/// A model file's identity by content (its size, head and tail hashed): a copy is the same
/// model, a file replaced under the same name another.
pub fn model_key(model: &Path) -> std::io::Result<String> {
    let mut file = fs::File::open(model)?;
    let size = file.metadata()?.len();
    let mut hash = Sha256::new();
    hash.update(size.to_le_bytes());
    let mut head = Vec::new();
    (&mut file).take(HEAD_BYTES).read_to_end(&mut head)?;
    hash.update(&head);
    if size > HEAD_BYTES + TAIL_BYTES {
        file.seek(SeekFrom::End(-(TAIL_BYTES as i64)))?;
        let mut tail = Vec::new();
        file.take(TAIL_BYTES).read_to_end(&mut tail)?;
        hash.update(&tail);
    }
    Ok(hex(&hash.finalize()[..16]))
}

/// Why a state file was not used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StateFileError {
    #[error("it is not a Hearth KV state file or it is cut short")]
    Truncated,
    #[error("it was written by another version (format {0})")]
    Version(u32),
    #[error("it belongs to another model or cache layout")]
    ForeignKey,
    #[error("it belongs to another chat")]
    ForeignChat,
    #[error("its checksum does not match: it is damaged")]
    Damaged,
}

/// The file's bytes: magic, version, key, chat, tokens, data, checkpoints (each its token count,
/// whether it opens a message, its data), then SHA-256 of all before.
pub fn encode(key: &str, chat: ConversationId, state: &SavedState) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + key.len() + state.tokens.len() * 4 + state.data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&chat.to_le_bytes());
    out.extend_from_slice(&(state.tokens.len() as u32).to_le_bytes());
    for token in &state.tokens {
        out.extend_from_slice(&token.to_le_bytes());
    }
    out.extend_from_slice(&(state.data.len() as u64).to_le_bytes());
    out.extend_from_slice(&state.data);
    out.extend_from_slice(&(state.checkpoints.len() as u32).to_le_bytes());
    for checkpoint in &state.checkpoints {
        out.extend_from_slice(&(checkpoint.at as u32).to_le_bytes());
        out.push(u8::from(checkpoint.opens_message));
        out.extend_from_slice(&(checkpoint.data.len() as u64).to_le_bytes());
        out.extend_from_slice(&checkpoint.data);
    }
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

/// Reads a file written by [`encode`] for `key` and `chat`; anything else is refused.
pub fn decode(bytes: &[u8], key: &str, chat: ConversationId) -> Result<SavedState, StateFileError> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(8)? != MAGIC {
        return Err(StateFileError::Truncated);
    }
    let version = r.u32()?;
    if version != FORMAT_VERSION {
        return Err(StateFileError::Version(version));
    }
    let body_end = bytes.len().checked_sub(32).ok_or(StateFileError::Truncated)?;
    if Sha256::digest(&bytes[..body_end])[..] != bytes[body_end..] {
        return Err(StateFileError::Damaged);
    }
    let key_len = r.u32()? as usize;
    if r.take(key_len)? != key.as_bytes() {
        return Err(StateFileError::ForeignKey);
    }
    if i64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes")) != chat {
        return Err(StateFileError::ForeignChat);
    }
    let n_tokens = r.u32()? as usize;
    let tokens = r.take(n_tokens.checked_mul(4).ok_or(StateFileError::Truncated)?)?;
    let tokens = tokens.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
    let data = r.blob()?;
    let mut checkpoints = Vec::new();
    for _ in 0..r.u32()? {
        let at = r.u32()? as usize;
        let opens_message = r.take(1)?[0] != 0;
        checkpoints.push(Checkpoint { at, opens_message, data: r.blob()? });
    }
    if r.at != body_end {
        return Err(StateFileError::Truncated);
    }
    Ok(SavedState { tokens, data, checkpoints })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StateFileError> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len()).ok_or(StateFileError::Truncated)?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u32(&mut self) -> Result<u32, StateFileError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    /// A length (u64) and that many bytes.
    fn blob(&mut self) -> Result<Vec<u8>, StateFileError> {
        let len = usize::try_from(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes"))).map_err(|_| StateFileError::Truncated)?;
        Ok(self.take(len)?.to_vec())
    }
}

/// The chats' caches for one loaded model.
pub struct KvMemory {
    config: KvConfig,
    key: String,
    ram: HashMap<ConversationId, (SavedState, u64)>,
    /// Use counter: larger is more recent.
    tick: u64,
}

impl KvMemory {
    pub fn new(config: KvConfig, key: String) -> Self {
        KvMemory { config, key, ram: HashMap::new(), tick: 0 }
    }

    /// Bytes of states held in RAM.
    pub fn ram_bytes(&self) -> u64 {
        self.ram.values().map(|(s, _)| s.bytes()).sum()
    }

    /// Keeps `chat`'s cache; the least recently used states leave RAM for disk past the budget.
    pub fn park(&mut self, chat: ConversationId, state: SavedState) {
        self.tick += 1;
        self.ram.insert(chat, (state, self.tick));
        self.fit_ram();
    }

    /// New budgets, in force at once: states past the RAM budget go to disk, the oldest files
    /// past the disk budget are deleted.
    pub fn set_budgets(&mut self, budgets: CacheBudgets) {
        self.config.set_budgets(budgets);
        self.fit_ram();
        trim_disk(&self.config);
    }

    fn fit_ram(&mut self) {
        while self.ram_bytes() > self.config.ram_budget {
            let Some((&oldest, _)) = self.ram.iter().min_by_key(|(_, (_, used))| *used) else { break };
            let (state, _) = self.ram.remove(&oldest).expect("listed");
            self.spill(oldest, &state);
        }
    }

    /// `chat`'s cache, from RAM or disk; it is live again (a later `park` keeps it anew).
    pub fn take(&mut self, chat: ConversationId) -> Option<(SavedState, PromptSource)> {
        if let Some((state, _)) = self.ram.remove(&chat) {
            return Some((state, PromptSource::Ram));
        }
        let path = self.file(chat)?;
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "a chat's KV state could not be read; its prompt is prefilled");
                return None;
            }
        };
        match decode(&bytes, &self.key, chat) {
            Ok(state) => Some((state, PromptSource::Disk)),
            Err(why) => {
                tracing::warn!(path = %path.display(), %why, "a chat's KV state file was dropped; its prompt is prefilled");
                let _ = fs::remove_file(&path);
                None
            }
        }
    }

    /// Drops `chat`'s cache everywhere, every model's file included (the chat was deleted);
    /// `None`: every chat's.
    pub fn forget(&mut self, chat: Option<ConversationId>) {
        match chat {
            Some(chat) => {
                self.ram.remove(&chat);
            }
            None => self.ram.clear(),
        }
        forget_on_disk(&self.config, chat);
    }

    /// Writes every state held in RAM to disk (the model is unloaded or the engine quits).
    pub fn spill_all(&mut self) {
        for (chat, (state, _)) in std::mem::take(&mut self.ram) {
            self.spill(chat, &state);
        }
    }

    /// This model's folder of state files: named by the key, so another model never looks there.
    fn folder(&self) -> Option<PathBuf> {
        let dir = self.config.dir.as_ref()?;
        Some(dir.join(hex(&Sha256::digest(self.key.as_bytes())[..8])))
    }

    fn file(&self, chat: ConversationId) -> Option<PathBuf> {
        Some(self.folder()?.join(format!("chat-{chat}.kv")))
    }

    /// Writes `chat`'s state whole or not at all (a full disk leaves no partial file and the
    /// other chats' files as they were), then trims the folder to the disk budget.
    fn spill(&self, chat: ConversationId, state: &SavedState) {
        let (Some(folder), Some(path)) = (self.folder(), self.file(chat)) else { return };
        let bytes = encode(&self.key, chat, state);
        if bytes.len() as u64 > self.config.disk_budget {
            return;
        }
        let partial = path.with_extension("kv.partial");
        let written = fs::create_dir_all(&folder).and_then(|()| fs::write(&partial, &bytes)).and_then(|()| fs::rename(&partial, &path));
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e, "a chat's KV state could not be saved; its prompt will be prefilled");
            let _ = fs::remove_file(&partial);
            return;
        }
        trim_disk(&self.config);
    }
}

/// Deletes `chat`'s state files of every model; `None`: every state file.
pub fn forget_on_disk(config: &KvConfig, chat: Option<ConversationId>) {
    let Some(dir) = config.dir.as_ref() else { return };
    let Some(chat) = chat else {
        let _ = fs::remove_dir_all(dir);
        return;
    };
    let Ok(folders) = fs::read_dir(dir) else { return };
    for folder in folders.filter_map(|e| e.ok()) {
        let _ = fs::remove_file(folder.path().join(format!("chat-{chat}.kv")));
    }
}

/// What the state files under `dir` take on disk: bytes and number of files.
pub fn disk_usage(dir: &Path) -> (u64, u32) {
    let Ok(folders) = fs::read_dir(dir) else { return (0, 0) };
    let mut usage = (0, 0);
    for file in folders.filter_map(|e| e.ok()).filter_map(|f| fs::read_dir(f.path()).ok()).flatten().filter_map(|e| e.ok()) {
        if let Ok(meta) = file.metadata() {
            usage = (usage.0 + meta.len(), usage.1 + 1);
        }
    }
    usage
}

/// Deletes the least recently written state files, of any model, until they fit the disk budget.
pub fn trim_disk(config: &KvConfig) {
    let Some(dir) = config.dir.as_ref() else { return };
    let Ok(folders) = fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = folders
        .filter_map(|e| e.ok())
        .filter_map(|folder| fs::read_dir(folder.path()).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    files.sort();
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    for (_, len, path) in files {
        if total <= config.disk_budget {
            break;
        }
        if fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(n: usize) -> SavedState {
        let checkpoints = vec![Checkpoint { at: n / 2, opens_message: true, data: vec![7; n] }];
        SavedState { tokens: (0..n as i32).collect(), data: (0..n * 10).map(|i| i as u8).collect(), checkpoints }
    }

    /// Every way a file can be wrong is refused before llama.cpp would see its bytes.
    #[test]
    fn a_state_file_is_used_only_for_its_model_and_chat_and_only_whole() {
        let good = encode("key-a", 7, &state(5));
        assert_eq!(decode(&good, "key-a", 7), Ok(state(5)));
        let mut flipped = good.clone();
        flipped[40] ^= 1;
        let mut other_version = good.clone();
        other_version[8] = 9;
        let cases: Vec<(&str, Vec<u8>, &str, i64, StateFileError)> = vec![
            ("empty", vec![], "key-a", 7, StateFileError::Truncated),
            ("not ours", b"GGUF....".repeat(10), "key-a", 7, StateFileError::Truncated),
            ("cut short", good[..good.len() - 10].to_vec(), "key-a", 7, StateFileError::Damaged),
            ("cut to the header", good[..14].to_vec(), "key-a", 7, StateFileError::Truncated),
            ("a flipped bit", flipped, "key-a", 7, StateFileError::Damaged),
            ("another version", other_version, "key-a", 7, StateFileError::Version(9)),
            ("another model", good.clone(), "key-b", 7, StateFileError::ForeignKey),
            ("another chat", good.clone(), "key-a", 8, StateFileError::ForeignChat),
        ];
        for (name, bytes, key, chat, want) in cases {
            assert_eq!(decode(&bytes, key, chat), Err(want), "{name}");
        }
    }

    #[test]
    fn states_leave_ram_oldest_first_for_disk_and_come_back_once() {
        let dir = tempfile::tempdir().unwrap();
        let one = state(100).bytes();
        let config = KvConfig { dir: Some(dir.path().to_path_buf()), ram_budget: one * 2, disk_budget: 1 << 30, models_budget: 0 };
        let mut memory = KvMemory::new(config.clone(), "k".into());
        for chat in 1..=3 {
            memory.park(chat, state(100));
        }
        // Chat 1 was used least recently: it went to disk.
        assert_eq!(memory.ram_bytes(), one * 2);
        assert_eq!(memory.take(1), Some((state(100), PromptSource::Disk)));
        assert_eq!(memory.take(3), Some((state(100), PromptSource::Ram)));
        assert_eq!(memory.take(3), None, "taken: it is live now");
        // At quit everything goes to disk; a new engine on the same model finds it.
        memory.spill_all();
        let mut after_restart = KvMemory::new(config.clone(), "k".into());
        assert_eq!(after_restart.take(2), Some((state(100), PromptSource::Disk)));
        // Another model does not look in this model's folder.
        memory.park(4, state(3));
        memory.spill_all();
        assert_eq!(KvMemory::new(config.clone(), "other".into()).take(4), None);
        memory.forget(Some(4));
        assert_eq!(KvMemory::new(config, "k".into()).take(4), None, "forgotten");
    }

    #[test]
    fn budgets_below_one_state_keep_nothing_and_a_bad_folder_loses_only_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let tiny = KvConfig { dir: Some(dir.path().to_path_buf()), ram_budget: 0, disk_budget: 10, models_budget: 0 };
        let mut memory = KvMemory::new(tiny, "k".into());
        memory.park(1, state(100));
        assert_eq!((memory.ram_bytes(), memory.take(1)), (0, None));
        // The spill folder's path is taken by a file: nothing is saved, nothing breaks.
        let blocked = dir.path().join("blocked");
        fs::write(&blocked, b"x").unwrap();
        let config = KvConfig { dir: Some(blocked), ram_budget: 0, disk_budget: 1 << 30, models_budget: 0 };
        let mut memory = KvMemory::new(config, "k".into());
        memory.park(1, state(10));
        assert_eq!(memory.take(1), None);
    }

    #[test]
    fn the_disk_budget_keeps_the_newest_files() {
        let dir = tempfile::tempdir().unwrap();
        let size = encode("k", 1, &state(100)).len() as u64;
        let config = KvConfig { dir: Some(dir.path().to_path_buf()), ram_budget: 0, disk_budget: size * 2, models_budget: 0 };
        let mut memory = KvMemory::new(config, "k".into());
        for chat in 1..=3 {
            memory.park(chat, state(100));
            std::thread::sleep(std::time::Duration::from_millis(20)); // distinct write times
        }
        assert_eq!(memory.take(1), None, "the oldest file went");
        assert!(memory.take(2).is_some() && memory.take(3).is_some());
    }

    /// A disk that is full while a state spills: the write fails (ENOSPC from /dev/full, a real
    /// device that refuses every write), no partial file is left, nothing else is lost, and the
    /// chat's next reply is merely prefilled.
    #[test]
    fn a_full_disk_while_spilling_loses_only_that_cache() {
        let dir = tempfile::tempdir().unwrap();
        let config = KvConfig { dir: Some(dir.path().to_path_buf()), ram_budget: 0, disk_budget: 1 << 30, models_budget: 0 };
        let mut memory = KvMemory::new(config.clone(), "k".into());
        memory.park(1, state(50));
        let folder = memory.folder().unwrap();
        let kept = fs::read(folder.join("chat-1.kv")).unwrap();
        // Chat 2's file goes where writes hit a full device.
        std::os::unix::fs::symlink("/dev/full", folder.join("chat-2.kv.partial")).unwrap();
        memory.park(2, state(50));
        assert_eq!(memory.take(2), None, "nothing was saved");
        assert!(!folder.join("chat-2.kv.partial").exists() && !folder.join("chat-2.kv").exists());
        assert_eq!(fs::read(folder.join("chat-1.kv")).unwrap(), kept, "the other chat's file is untouched");
        assert_eq!(memory.take(1), Some((state(50), PromptSource::Disk)));
    }

    /// Budgets changed while states are kept take effect at once: RAM spills, disk is trimmed
    /// across every model's folder, oldest first.
    #[test]
    fn new_budgets_apply_at_once_across_models() {
        let dir = tempfile::tempdir().unwrap();
        let config = KvConfig { dir: Some(dir.path().to_path_buf()), ram_budget: 1 << 30, disk_budget: 1 << 30, models_budget: 0 };
        let file = encode("model-a", 1, &state(100)).len() as u64;
        let mut a = KvMemory::new(config.clone(), "model-a".into());
        let mut b = KvMemory::new(config.clone(), "model-b".into());
        a.park(1, state(100));
        a.spill_all();
        std::thread::sleep(std::time::Duration::from_millis(20));
        for chat in [2, 3] {
            b.park(chat, state(100));
        }
        assert_eq!(disk_usage(dir.path()), (file, 1));
        // RAM to nothing: model b's two states spill; disk to two files: model a's, the oldest, goes.
        b.set_budgets(CacheBudgets { ram_mb: 0, disk_mb: 1, ..CacheBudgets::default() });
        assert_eq!(b.ram_bytes(), 0);
        let mut config = config;
        config.disk_budget = file * 2;
        trim_disk(&config);
        assert_eq!(disk_usage(dir.path()).1, 2);
        assert_eq!(a.take(1), None, "the oldest file went, whatever its model");
        assert!(b.take(2).is_some() && b.take(3).is_some());
    }

    #[test]
    fn the_key_follows_the_models_content_not_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.gguf"), dir.path().join("b.gguf"));
        fs::write(&a, vec![1u8; 3 << 20]).unwrap();
        fs::write(&b, vec![1u8; 3 << 20]).unwrap();
        assert_eq!(state_key(&a, "f16").unwrap(), state_key(&b, "f16").unwrap(), "a copy is the same model");
        assert_ne!(state_key(&a, "f16").unwrap(), state_key(&a, "q8_0").unwrap(), "another cache layout");
        // Replaced under the same name with other weights.
        fs::write(&a, vec![2u8; 3 << 20]).unwrap();
        assert_ne!(state_key(&a, "f16").unwrap(), state_key(&b, "f16").unwrap());
    }
}
