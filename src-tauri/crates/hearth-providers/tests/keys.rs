//! API keys in the real OS keychain (the Secret Service: scripts/test.sh runs the tests inside a
//! D-Bus session with an unlocked GNOME Keyring, as a desktop session has).

use std::sync::{Mutex, MutexGuard};

use hearth_providers::{KeySource, KeyStorage, KeyStore, Secret};

/// One keychain test at a time: should the Secret Service not be running yet, the first call has
/// D-Bus start it, and a call made beside that start fails (`NoStorageAccess`).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[test]
fn keys_go_to_the_keychain_and_never_to_the_file() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.json");
    let store = KeyStore::new(&file);
    let provider = format!("test-{}", std::process::id());
    let key = "sk-keychain-test-4d9e";

    let stored = store.set(Secret::Provider(&provider), key).unwrap();
    assert_eq!(stored, KeyStorage::Keychain, "no keychain answered: run the tests through scripts/test.sh, which starts one ({stored:?})");
    assert!(!file.exists(), "nothing is written to the fallback file");
    assert_eq!(store.key(&provider).unwrap().as_deref(), Some(key));
    assert_eq!(store.location(Secret::Provider(&provider)).unwrap(), Some(KeyStorage::Keychain));

    // Another store (another process, say the CLI) finds it by the provider id.
    assert_eq!(KeyStore::new(dir.path().join("other.json")).key(&provider).unwrap().as_deref(), Some(key));

    store.set(Secret::Provider(&provider), "sk-replaced").unwrap();
    assert_eq!(store.key(&provider).unwrap().as_deref(), Some("sk-replaced"));
    store.delete(Secret::Provider(&provider)).unwrap();
    assert_eq!(store.key(&provider).unwrap(), None);
    assert_eq!(store.location(Secret::Provider(&provider)).unwrap(), None);
}

/// The server key and the hub token were once filed as providers' keys; found there, they move
/// to names of their own, and no provider is ever given them.
#[test]
fn secrets_kept_under_provider_names_move_to_their_own() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let store = KeyStore::new(dir.path().join("keys.json"));
    for (reserved, secret, value) in
        [("hearth-server", Secret::ServerKey, "sk-legacy-server"), ("huggingface-hub", Secret::HubToken, "hf_legacy")]
    {
        let legacy = keyring::Entry::new("hearth", &format!("provider:{reserved}")).unwrap();
        legacy.set_password(value).unwrap();
        assert_eq!(store.key(reserved).unwrap(), None, "a provider named {reserved} is not given it");
        assert_eq!(store.secret(secret).unwrap().as_deref(), Some(value));
        assert!(matches!(legacy.get_password(), Err(keyring::Error::NoEntry)), "moved, not copied");
        assert_eq!(store.secret(secret).unwrap().as_deref(), Some(value), "found under its own name");
        store.delete(secret).unwrap();
        assert_eq!(store.secret(secret).unwrap(), None);
    }
}
