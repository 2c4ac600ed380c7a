//! Where no keychain answers (no D-Bus session, no Secret Service), keys go to a file only the
//! user can read, and the caller is told where and why.

use std::os::unix::fs::PermissionsExt;

use hearth_providers::{KeySource, KeyStorage, KeyStore};

#[test]
fn without_a_keychain_keys_fall_back_to_a_private_file_and_say_so() {
    // SAFETY of set_var: the only test in this binary, before anything reads the environment.
    unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/hearth-test-bus") };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.json");
    let store = KeyStore::new(&file);

    let stored = store.set("openai", "sk-fallback-77aa").unwrap();
    let KeyStorage::File { path, reason } = &stored else { panic!("{stored:?}") };
    assert_eq!(path, &file.display().to_string());
    assert!(reason.starts_with("The keychain said: ") && reason.contains("GNOME Keyring"), "{reason}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600, "readable by the user only");
    assert_eq!(store.key("openai").unwrap().as_deref(), Some("sk-fallback-77aa"));
    assert_eq!(store.location("openai").unwrap(), Some(stored));

    store.set("anthropic", "sk-second").unwrap();
    store.delete("openai").unwrap();
    assert_eq!(store.key("openai").unwrap(), None);
    let left = std::fs::read_to_string(&file).unwrap();
    assert!(!left.contains("sk-fallback-77aa") && left.contains("sk-second"), "{left}");

    std::fs::write(&file, "{ not json").unwrap();
    let damaged = store.key("anthropic").unwrap_err().to_string();
    assert!(damaged.contains("is damaged; delete it and enter the keys again"), "{damaged}");
}
