//! API keys: in the OS keychain (`keyring`: Secret Service, macOS Keychain, Windows Credential
//! Manager); where none answers, in a file only the user can read, and the user is told so.
//! Keys are never logged, stored in SQLite, exported or put into an error message.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use ts_rs::TS;

/// Keychain service name the keys are filed under.
const SERVICE: &str = "hearth";

/// Where a key is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum KeyStorage {
    /// The OS keychain.
    Keychain,
    /// The fallback file (mode 0600), because no keychain answered; `reason` says why, in
    /// sentences.
    File { path: String, reason: String },
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("could not use the key file {path}: {source}")]
    File { path: PathBuf, source: std::io::Error },
    #[error("the key file {path} is damaged; delete it and enter the keys again")]
    Damaged { path: PathBuf },
    #[error("the keychain refused the key: {0}")]
    Refused(String),
}

/// Reads and writes provider keys, by provider id.
pub trait KeySource: Send + Sync + 'static {
    fn key(&self, provider: &str) -> Result<Option<String>, KeyError>;
}

/// The keychain, with the fallback file beside Hearth's data.
pub struct KeyStore {
    fallback: PathBuf,
}

impl KeyStore {
    /// `fallback` is the file used where no keychain answers.
    pub fn new(fallback: impl Into<PathBuf>) -> Self {
        KeyStore { fallback: fallback.into() }
    }

    /// Saves `key` for `provider`; says where it went.
    pub fn set(&self, provider: &str, key: &str) -> Result<KeyStorage, KeyError> {
        match keychain_entry(provider).and_then(|entry| entry.set_password(key)) {
            Ok(()) => {
                // A key saved to the file earlier (keychain down then) must not linger there.
                self.remove_from_file(provider)?;
                Ok(KeyStorage::Keychain)
            }
            Err(error @ (keyring::Error::TooLong(..) | keyring::Error::Invalid(..))) => Err(KeyError::Refused(error.to_string())),
            Err(error) => {
                tracing::warn!(error = %error, "no keychain: the key goes to the fallback file");
                let mut keys = self.read_file()?;
                keys.insert(provider.to_owned(), key.to_owned());
                self.write_file(&keys)?;
                Ok(KeyStorage::File { path: self.fallback.display().to_string(), reason: no_keychain_reason(&error) })
            }
        }
    }

    /// Where `provider`'s key is, if it has one.
    pub fn location(&self, provider: &str) -> Result<Option<KeyStorage>, KeyError> {
        Ok(self.lookup(provider)?.map(|(_, storage)| storage))
    }

    /// Forgets `provider`'s key everywhere it may be.
    pub fn delete(&self, provider: &str) -> Result<(), KeyError> {
        if let Ok(entry) = keychain_entry(provider)
            && let Err(e) = entry.delete_credential()
            && !matches!(e, keyring::Error::NoEntry)
        {
            tracing::warn!(error = %e, "could not delete a key from the keychain");
        }
        self.remove_from_file(provider)
    }

    fn lookup(&self, provider: &str) -> Result<Option<(String, KeyStorage)>, KeyError> {
        let keychain = keychain_entry(provider).and_then(|entry| entry.get_password());
        let reason = match keychain {
            Ok(key) => return Ok(Some((key, KeyStorage::Keychain))),
            Err(keyring::Error::NoEntry) => "It was saved there while no keychain answered.".to_owned(),
            Err(error) => no_keychain_reason(&error),
        };
        let path = self.fallback.display().to_string();
        Ok(self.read_file()?.remove(provider).map(|key| (key, KeyStorage::File { path, reason })))
    }

    fn read_file(&self) -> Result<BTreeMap<String, String>, KeyError> {
        match std::fs::read(&self.fallback) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|_| KeyError::Damaged { path: self.fallback.clone() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(source) => Err(KeyError::File { path: self.fallback.clone(), source }),
        }
    }

    fn remove_from_file(&self, provider: &str) -> Result<(), KeyError> {
        let mut keys = self.read_file()?;
        if keys.remove(provider).is_some() {
            self.write_file(&keys)?;
        }
        Ok(())
    }

    /// Writes the whole file beside itself and renames it over, readable by the user only.
    fn write_file(&self, keys: &BTreeMap<String, String>) -> Result<(), KeyError> {
        let io = |source| KeyError::File { path: self.fallback.clone(), source };
        let part = part_path(&self.fallback);
        if let Some(dir) = self.fallback.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&part).map_err(io)?;
        file.write_all(&serde_json::to_vec_pretty(keys).expect("keys serialize")).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&part, &self.fallback).map_err(io)
    }
}

impl KeySource for KeyStore {
    fn key(&self, provider: &str) -> Result<Option<String>, KeyError> {
        Ok(self.lookup(provider)?.map(|(key, _)| key))
    }
}

fn keychain_entry(provider: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(SERVICE, &format!("provider:{provider}"))
}

/// Why the file is used, as sentences the UI shows after "No keychain answered: …".
fn no_keychain_reason(error: &keyring::Error) -> String {
    format!(
        "The keychain said: {error}. On Linux, install and unlock a Secret Service keyring such as GNOME Keyring or KWallet, then save the key again."
    )
}

fn part_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".part");
    path.with_file_name(name)
}

/// Keys from fixed values, e.g. the CLI's environment variable.
pub struct FixedKeys(pub BTreeMap<String, String>);

impl KeySource for FixedKeys {
    fn key(&self, provider: &str) -> Result<Option<String>, KeyError> {
        Ok(self.0.get(provider).cloned())
    }
}
