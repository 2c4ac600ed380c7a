//! Where no keychain answers (no D-Bus session, no Secret Service), keys go to a file only the
//! user can read, and the caller is told where and why.

use std::os::unix::fs::PermissionsExt;

use hearth_providers::{KeySource, KeyStorage, KeyStore, Secret};

#[test]
fn without_a_keychain_keys_fall_back_to_a_private_file_and_say_so() {
    // SAFETY of set_var: the only test in this binary, before anything reads the environment.
    unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/hearth-test-bus") };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.json");
    let store = KeyStore::new(&file);

    let stored = store.set(Secret::Provider("openai"), "sk-fallback-77aa").unwrap();
    let KeyStorage::File { path, reason } = &stored else { panic!("{stored:?}") };
    assert_eq!(path, &file.display().to_string());
    assert!(reason.starts_with("The keychain said: ") && reason.contains("GNOME Keyring"), "{reason}");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600, "readable by the user only");
    assert_eq!(store.key("openai").unwrap().as_deref(), Some("sk-fallback-77aa"));
    assert_eq!(store.location(Secret::Provider("openai")).unwrap(), Some(stored));

    store.set(Secret::Provider("anthropic"), "sk-second").unwrap();
    store.delete(Secret::Provider("openai")).unwrap();
    assert_eq!(store.key("openai").unwrap(), None);
    let left = std::fs::read_to_string(&file).unwrap();
    assert!(!left.contains("sk-fallback-77aa") && left.contains("sk-second"), "{left}");

    // Each secret has a name of its own: a provider called as the server key once was is given
    // neither the server key nor the hub token, and cannot be given a key at all.
    store.set(Secret::ServerKey, "sk-server-5150").unwrap();
    store.set(Secret::HubToken, "hf_token_8080").unwrap();
    for reserved in hearth_providers::RESERVED_PROVIDER_IDS {
        assert_eq!(store.key(reserved).unwrap(), None, "{reserved}");
        assert!(store.set(Secret::Provider(reserved), "sk-x").unwrap_err().to_string().contains("reserved"));
    }
    assert_eq!(store.secret(Secret::ServerKey).unwrap().as_deref(), Some("sk-server-5150"));
    assert_eq!(store.secret(Secret::HubToken).unwrap().as_deref(), Some("hf_token_8080"));

    // A file written before secrets had names of their own is read by the names it used.
    std::fs::write(&file, r#"{"openai":"sk-old","hearth-server":"sk-old-server","huggingface-hub":"hf_old"}"#).unwrap();
    assert_eq!(store.key("openai").unwrap().as_deref(), Some("sk-old"));
    assert_eq!(store.secret(Secret::ServerKey).unwrap().as_deref(), Some("sk-old-server"));
    assert_eq!(store.secret(Secret::HubToken).unwrap().as_deref(), Some("hf_old"));
    assert_eq!(store.key("hearth-server").unwrap(), None);

    std::fs::write(&file, "{ not json").unwrap();
    let damaged = store.key("anthropic").unwrap_err().to_string();
    assert!(damaged.contains("is damaged; delete it and enter the keys again"), "{damaged}");
}
