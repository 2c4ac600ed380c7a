//! Signed updates through tauri-plugin-updater: the endpoint (Settings → Updates) answers a
//! manifest; a newer version's package is downloaded with progress, its minisign signature checked
//! against the public key built into this app (`HEARTH_UPDATE_PUBKEY` at build time: a build
//! without one offers no updates), installed by the system's package tool (dpkg or rpm, through
//! pkexec or sudo), and Hearth restarted. The history, settings, keys and models live outside the
//! package and stay; the database's migrations run at the next start as after any upgrade.

use std::sync::Mutex;

use hearth_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Runtime};
use tauri_plugin_updater::{Update, UpdaterExt};
use ts_rs::TS;

/// The release key's public half, given at build time by whoever signs releases.
pub const BUILT_IN_KEY: Option<&str> = option_env!("HEARTH_UPDATE_PUBKEY");
/// Where releases are announced, given at build time with the key; the user may set another.
pub const BUILT_IN_ENDPOINT: Option<&str> = option_env!("HEARTH_UPDATE_ENDPOINT");

const SETTINGS_KEY: &str = "updates";

/// Settings → Updates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSettings {
    /// Ask the endpoint for a newer version when Hearth starts.
    pub check_at_start: bool,
    /// The update manifest's address (`""`: none).
    pub endpoint: String,
}

impl Default for UpdateSettings {
    fn default() -> Self {
        UpdateSettings { check_at_start: true, endpoint: BUILT_IN_ENDPOINT.unwrap_or_default().to_owned() }
    }
}

impl UpdateSettings {
    /// The saved settings, the defaults until the user changes them.
    pub async fn read(store: &Store) -> Result<UpdateSettings, StoreError> {
        let saved = store.setting(SETTINGS_KEY).await?;
        Ok(saved.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default())
    }

    /// Saves them once the endpoint is an update address (or none).
    pub async fn write(&self, store: &Store) -> Result<(), UpdateSettingsError> {
        if !self.endpoint.trim().is_empty() {
            endpoint_url(&self.endpoint)?;
        }
        let json = serde_json::to_string(self).expect("settings serialize");
        Ok(store.set_setting(SETTINGS_KEY, &json).await?)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UpdateSettingsError {
    #[error(transparent)]
    Endpoint(#[from] UpdateError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What Settings → Updates shows.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    pub settings: UpdateSettings,
    /// This build has a release key: it can update itself.
    pub enabled: bool,
    pub current_version: String,
}

/// A newer Hearth the endpoint offers.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AvailableUpdate {
    pub version: String,
    pub current_version: String,
    /// The release notes, as plain text.
    pub notes: Option<String>,
    /// When it was published (RFC 3339), if the manifest says.
    pub date: Option<String>,
}

/// How an install goes: the download (bytes so far, of the total when the server says), then the
/// package tool.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase", tag = "stage")]
pub enum UpdateProgress {
    Downloading {
        #[ts(type = "number")]
        downloaded: u64,
        #[ts(type = "number | null")]
        total: Option<u64>,
        /// 1 for the first try; more after a download was cut off (see `DOWNLOAD_TRIES`).
        attempt: u32,
    },
    Installing,
}

#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error("this build of Hearth has no key to check updates with, so it does not update itself; install a new package by hand")]
    NoKey,
    #[error("\"{endpoint}\" is not an update address: {why}")]
    BadEndpoint { endpoint: String, why: String },
    #[error("the update server at {endpoint} could not be reached ({detail}); Hearth stays as it is")]
    Unreachable { endpoint: String, detail: String },
    #[error("the update's download was cut off {tries} times ({detail}); Hearth stays as it is: try again later")]
    CutOff { tries: u32, detail: String },
    #[error("the update server's answer is not an update manifest for this system ({0})")]
    BadManifest(String),
    #[error("the downloaded update does not match its signature, so it was not installed (it may have been damaged or tampered with): {0}")]
    Signature(String),
    #[error("the update could not be installed ({0}); Hearth stays as it is")]
    Install(String),
    #[error("there is no update to install: check for updates first")]
    NothingToInstall,
    #[error("no update address is set: add one in Settings → Updates")]
    NoEndpoint,
}

impl From<tauri_plugin_updater::Error> for UpdateError {
    fn from(e: tauri_plugin_updater::Error) -> Self {
        use tauri_plugin_updater::Error as E;
        match e {
            E::Minisign(_) | E::Base64(_) | E::SignatureUtf8(_) => UpdateError::Signature(e.to_string()),
            E::ReleaseNotFound | E::TargetNotFound(_) | E::TargetsNotFound(_) | E::Semver(_) | E::Serialization(_) => {
                UpdateError::BadManifest(e.to_string())
            }
            other => UpdateError::Install(other.to_string()),
        }
    }
}

/// How many times a download cut off on the way is tried in all.
pub const DOWNLOAD_TRIES: u32 = 3;
/// The longest one try of a download may take.
const DOWNLOAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15 * 60);
/// How often a download's progress is told.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
/// The pause before a cut download starts again.
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// The update the last check found, kept for its install.
pub struct Updates {
    key: Option<String>,
    found: Mutex<Option<Update>>,
}

impl Updates {
    /// Trusting the release key `key` (`None`: no updates).
    pub fn new(key: Option<&str>) -> Updates {
        Updates { key: key.filter(|k| !k.trim().is_empty()).map(str::to_owned), found: Mutex::default() }
    }

    /// Whether this build can update itself.
    pub fn enabled(&self) -> bool {
        self.key.is_some()
    }

    /// Asks `endpoint` for a version newer than this one (an older or equal one is no update).
    pub async fn check<R: Runtime>(&self, app: &AppHandle<R>, endpoint: &str) -> Result<Option<AvailableUpdate>, UpdateError> {
        let key = self.key.as_deref().ok_or(UpdateError::NoKey)?;
        if endpoint.trim().is_empty() {
            return Err(UpdateError::NoEndpoint);
        }
        let url = endpoint_url(endpoint)?;
        let updater = app
            .updater_builder()
            .pubkey(key)
            .endpoints(vec![url])
            .map_err(|e| UpdateError::BadEndpoint { endpoint: endpoint.into(), why: e.to_string() })?
            .timeout(std::time::Duration::from_secs(30))
            .build()?;
        let found = updater.check().await.map_err(|e| unreachable_or(endpoint, e))?;
        let available = found.as_ref().map(|u| AvailableUpdate {
            version: u.version.clone(),
            current_version: u.current_version.clone(),
            notes: u.body.clone().filter(|n| !n.trim().is_empty()),
            date: u.date.and_then(|d| d.format(&time::format_description::well_known::Rfc3339).ok()),
        });
        *self.found.lock().expect("updates poisoned") = found;
        Ok(available)
    }

    /// Downloads the update found last and checks its signature; answers the package's bytes.
    /// A download cut off on the way starts again, up to `DOWNLOAD_TRIES` times in all.
    pub async fn download(&self, mut progress: impl FnMut(UpdateProgress)) -> Result<Vec<u8>, UpdateError> {
        let mut update = self.found.lock().expect("updates poisoned").clone().ok_or(UpdateError::NothingToInstall)?;
        // The check's 30 s would end a package's download on a slow line; a try still ends.
        update.timeout = Some(DOWNLOAD_TIMEOUT);
        let endpoint = update.download_url.to_string();
        let mut attempt = 1;
        loop {
            let mut downloaded = 0u64;
            let mut said: Option<std::time::Instant> = None;
            let result = update
                .download(
                    |chunk, total| {
                        downloaded += chunk as u64;
                        // Every chunk is a few KB: the window hears of them a few times a second.
                        if said.is_none_or(|at| at.elapsed() >= PROGRESS_EVERY) {
                            said = Some(std::time::Instant::now());
                            progress(UpdateProgress::Downloading { downloaded, total, attempt });
                        }
                    },
                    || {},
                )
                .await;
            let error = match result {
                Ok(bytes) => {
                    let total = Some(bytes.len() as u64);
                    progress(UpdateProgress::Downloading { downloaded: bytes.len() as u64, total, attempt });
                    return Ok(bytes);
                }
                Err(e) => unreachable_or(&endpoint, e),
            };
            match error {
                // Under way, then cut: started again, then said.
                UpdateError::Unreachable { detail, .. } if downloaded > 0 => {
                    tracing::warn!(attempt, downloaded, %detail, "the update's download was cut off");
                    if attempt == DOWNLOAD_TRIES {
                        return Err(UpdateError::CutOff { tries: attempt, detail });
                    }
                }
                other => return Err(other),
            }
            attempt += 1;
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }

    /// Downloads, checks and installs the update found last; the caller restarts Hearth.
    pub async fn install(&self, mut progress: impl FnMut(UpdateProgress) + Send) -> Result<(), UpdateError> {
        let bytes = self.download(&mut progress).await?;
        progress(UpdateProgress::Installing);
        let update = self.found.lock().expect("updates poisoned").clone().ok_or(UpdateError::NothingToInstall)?;
        tokio::task::spawn_blocking(move || update.install(bytes)).await.map_err(|e| UpdateError::Install(e.to_string()))??;
        Ok(())
    }
}

/// The network's failures in words naming the server; the rest as they are.
fn unreachable_or(endpoint: &str, e: tauri_plugin_updater::Error) -> UpdateError {
    use tauri_plugin_updater::Error as E;
    match e {
        E::Reqwest(e) => UpdateError::Unreachable { endpoint: endpoint.into(), detail: root_cause(&e) },
        E::Network(detail) => UpdateError::Unreachable { endpoint: endpoint.into(), detail },
        other => other.into(),
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(source) = inner.source() {
        inner = source;
    }
    inner.to_string()
}

/// An update address: https, or http to this machine (a local mirror, the tests).
pub fn endpoint_url(endpoint: &str) -> Result<url::Url, UpdateError> {
    let bad = |why: &str| UpdateError::BadEndpoint { endpoint: endpoint.into(), why: why.into() };
    let url = url::Url::parse(endpoint.trim()).map_err(|e| bad(&e.to_string()))?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match url.scheme() {
        "https" => Ok(url),
        "http" if loopback => Ok(url),
        "http" => Err(bad("updates come over https (plain http only from this machine)")),
        other => Err(bad(&format!("{other}: is not a web address"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_addresses_are_https_or_this_machine() {
        for ok in ["https://updates.example.org/hearth/latest.json", "http://127.0.0.1:8080/latest.json", "http://localhost/x"] {
            assert!(endpoint_url(ok).is_ok(), "{ok}");
        }
        for bad in ["http://updates.example.org/latest.json", "ftp://x/y", "not a url", ""] {
            assert!(matches!(endpoint_url(bad), Err(UpdateError::BadEndpoint { .. })), "{bad}");
        }
    }
}
