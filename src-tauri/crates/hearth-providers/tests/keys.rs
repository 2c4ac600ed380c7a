//! API keys in the real OS keychain (the Secret Service: scripts/test.sh runs the tests inside a
//! D-Bus session with an unlocked GNOME Keyring, as a desktop session has).

use hearth_providers::{KeySource, KeyStorage, KeyStore};

#[test]
fn keys_go_to_the_keychain_and_never_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.json");
    let store = KeyStore::new(&file);
    let provider = format!("test-{}", std::process::id());
    let key = "sk-keychain-test-4d9e";

    let stored = store.set(&provider, key).unwrap();
    assert_eq!(stored, KeyStorage::Keychain, "no keychain answered: run the tests through scripts/test.sh, which starts one ({stored:?})");
    assert!(!file.exists(), "nothing is written to the fallback file");
    assert_eq!(store.key(&provider).unwrap().as_deref(), Some(key));
    assert_eq!(store.location(&provider).unwrap(), Some(KeyStorage::Keychain));

    // Another store (another process, say the CLI) finds it by the provider id.
    assert_eq!(KeyStore::new(dir.path().join("other.json")).key(&provider).unwrap().as_deref(), Some(key));

    store.set(&provider, "sk-replaced").unwrap();
    assert_eq!(store.key(&provider).unwrap().as_deref(), Some("sk-replaced"));
    store.delete(&provider).unwrap();
    assert_eq!(store.key(&provider).unwrap(), None);
    assert_eq!(store.location(&provider).unwrap(), None);
}
