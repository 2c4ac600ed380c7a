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

/// What a secret is for. Each kind has its own name in the keychain and in the fallback file, so
/// no provider, whatever its id, can be handed the server's key or the hub token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secret<'a> {
    /// A remote provider's API key, by the provider's id.
    Provider(&'a str),
    /// The key clients of Hearth's own server must send.
    ServerKey,
    /// The Hugging Face token that opens gated repositories.
    HubToken,
    /// An MCP server's environment and headers (JSON), which often hold its tokens, by its name.
    McpServer(&'a str),
    /// An MCP server's OAuth sign-in (JSON: the client Hearth registered as, the access and
    /// refresh tokens), by its name.
    McpSignIn(&'a str),
    /// The machine client Hearth signs in to an MCP server as (JSON: its id, and its secret or
    /// private key), by the server's name.
    McpClient(&'a str),
}

/// Provider ids under which the server key and the hub token were kept before they had names of
/// their own: never read as a provider's key.
pub const RESERVED_PROVIDER_IDS: [&str; 2] = ["hearth-server", "huggingface-hub"];

impl Secret<'_> {
    /// Its name in the keychain and the fallback file (provider ids have no ':').
    fn account(&self) -> String {
        match self {
            Secret::Provider(id) => format!("provider:{id}"),
            Secret::ServerKey => "app:server-key".into(),
            Secret::HubToken => "app:hub-token".into(),
            Secret::McpServer(name) => format!("mcp:{name}"),
            Secret::McpSignIn(name) => format!("mcp-sign-in:{name}"),
            Secret::McpClient(name) => format!("mcp-client:{name}"),
        }
    }

    /// Where it was kept before: moved to [`Self::account`] when found there.
    fn legacy_account(&self) -> Option<String> {
        match self {
            Secret::Provider(_) | Secret::McpServer(_) | Secret::McpSignIn(_) | Secret::McpClient(_) => None,
            Secret::ServerKey => Some(format!("provider:{}", RESERVED_PROVIDER_IDS[0])),
            Secret::HubToken => Some(format!("provider:{}", RESERVED_PROVIDER_IDS[1])),
        }
    }

    /// A provider id that once named another secret: it has no key of its own.
    fn is_reserved(&self) -> bool {
        matches!(self, Secret::Provider(id) if RESERVED_PROVIDER_IDS.contains(id))
    }
}

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
    #[error("the provider id `{0}` is reserved for Hearth's own keys: add the provider under another id")]
    ReservedId(String),
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

    /// Saves `key` as `secret`; says where it went.
    pub fn set(&self, secret: Secret<'_>, key: &str) -> Result<KeyStorage, KeyError> {
        if let (true, Secret::Provider(id)) = (secret.is_reserved(), secret) {
            return Err(KeyError::ReservedId(id.to_owned()));
        }
        let account = secret.account();
        match keychain_entry(&account).and_then(|entry| entry.set_password(key)) {
            Ok(()) => {
                // A key saved to the file earlier (keychain down then) must not linger there.
                self.remove_from_file(&account)?;
                Ok(KeyStorage::Keychain)
            }
            Err(error @ (keyring::Error::TooLong(..) | keyring::Error::Invalid(..))) => Err(KeyError::Refused(error.to_string())),
            Err(error) => {
                tracing::warn!(error = %error, "no keychain: the key goes to the fallback file");
                let mut keys = self.read_file()?;
                keys.insert(account, key.to_owned());
                self.write_file(&keys)?;
                Ok(KeyStorage::File { path: self.fallback.display().to_string(), reason: no_keychain_reason(&error) })
            }
        }
    }

    /// `secret`'s value, if it has one.
    pub fn secret(&self, secret: Secret<'_>) -> Result<Option<String>, KeyError> {
        Ok(self.lookup(secret)?.map(|(key, _)| key))
    }

    /// Where `secret` is, if it has a value.
    pub fn location(&self, secret: Secret<'_>) -> Result<Option<KeyStorage>, KeyError> {
        Ok(self.lookup(secret)?.map(|(_, storage)| storage))
    }

    /// Forgets `secret` everywhere it may be.
    pub fn delete(&self, secret: Secret<'_>) -> Result<(), KeyError> {
        let account = secret.account();
        let accounts =
            if secret.is_reserved() { vec![] } else { [Some(account.clone()), secret.legacy_account()].into_iter().flatten().collect() };
        for account in accounts {
            if let Ok(entry) = keychain_entry(&account)
                && let Err(e) = entry.delete_credential()
                && !matches!(e, keyring::Error::NoEntry)
            {
                tracing::warn!(error = %e, "could not delete a key from the keychain");
            }
        }
        self.remove_from_file(&account)
    }

    fn lookup(&self, secret: Secret<'_>) -> Result<Option<(String, KeyStorage)>, KeyError> {
        if secret.is_reserved() {
            return Ok(None);
        }
        let account = secret.account();
        let keychain = keychain_entry(&account).and_then(|entry| entry.get_password());
        let reason = match keychain {
            Ok(key) => return Ok(Some((key, KeyStorage::Keychain))),
            Err(keyring::Error::NoEntry) => match self.move_legacy(secret) {
                Some(key) => return Ok(Some((key, KeyStorage::Keychain))),
                None => "It was saved there while no keychain answered.".to_owned(),
            },
            Err(error) => no_keychain_reason(&error),
        };
        let path = self.fallback.display().to_string();
        Ok(self.read_file()?.remove(&account).map(|key| (key, KeyStorage::File { path, reason })))
    }

    /// A secret found where it was kept before it had its own name is moved to that name.
    fn move_legacy(&self, secret: Secret<'_>) -> Option<String> {
        let legacy = keychain_entry(&secret.legacy_account()?).ok()?;
        let key = legacy.get_password().ok()?;
        if keychain_entry(&secret.account()).and_then(|entry| entry.set_password(&key)).is_ok() {
            let _ = legacy.delete_credential();
        }
        Some(key)
    }

    /// The fallback file's keys by account (a file written before accounts had namespaces is
    /// read by the names it used then).
    fn read_file(&self) -> Result<BTreeMap<String, String>, KeyError> {
        let keys: BTreeMap<String, String> = match std::fs::read(&self.fallback) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|_| KeyError::Damaged { path: self.fallback.clone() })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(source) => return Err(KeyError::File { path: self.fallback.clone(), source }),
        };
        let account = |name: String| match name.as_str() {
            _ if name.contains(':') => name,
            "hearth-server" => Secret::ServerKey.account(),
            "huggingface-hub" => Secret::HubToken.account(),
            id => Secret::Provider(id).account(),
        };
        Ok(keys.into_iter().map(|(name, key)| (account(name), key)).collect())
    }

    fn remove_from_file(&self, account: &str) -> Result<(), KeyError> {
        let mut keys = self.read_file()?;
        if keys.remove(account).is_some() {
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
        self.secret(Secret::Provider(provider))
    }
}

fn keychain_entry(account: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(SERVICE, account)
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
