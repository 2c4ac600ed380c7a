//! A real process killed with SIGKILL in the middle of a streaming reply, then the history
//! reopened: nothing the user typed is lost, and the reply is there up to its last flush, marked
//! interrupted.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use hearth_core::{HistoryStore, MessageStatus, Role};
use hearth_store::Store;

fn model_path() -> PathBuf {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    assert!(path.exists(), "{} is missing: run scripts/fetch-model.sh target/test-data", path.display());
    path
}

/// `hearth-cli chat --db` with replies that never end on their own (EOS ignored) before `max_tokens`.
fn spawn_chat(db: &Path, chat: Option<i64>, max_tokens: u32) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.args(["chat", "--model"]).arg(model_path()).arg("--db").arg(db);
    if let Some(chat) = chat {
        command.args(["--chat", &chat.to_string()]);
    }
    command
        .args(["--ctx", "4096", "--threads", "2", "--ignore-eos", "--seed", "7"])
        .args(["--max-tokens", &max_tokens.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hearth-cli starts")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_process_killed_mid_reply_leaves_every_user_message_and_the_flushed_reply_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hearth.db");

    // A first exchange that ends normally.
    let mut first = spawn_chat(&db, None, 48);
    writeln!(first.stdin.take().unwrap(), "Tell me about the sea.").unwrap();
    let output = first.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let first_reply = String::from_utf8(output.stdout).unwrap();
    let chat = Store::open(&db).await.unwrap().list_chats().await.unwrap()[0].id;

    // The same chat carried on by a second process, killed while its reply streams.
    let mut second = spawn_chat(&db, Some(chat), 100_000);
    let mut stdin = second.stdin.take().unwrap();
    writeln!(stdin, "Now tell me about the mountains, at length.").unwrap();
    let mut stdout = second.stdout.take().unwrap();
    let (printed_tx, printed_rx) = mpsc::channel::<Vec<u8>>();
    let reader = thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n @ 1..) = stdout.read(&mut buf) {
            let _ = printed_tx.send(buf[..n].to_vec());
        }
    });
    let mut printed = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut streaming_since = None;
    // Several flush intervals (500 ms) into the reply, with text arriving.
    while streaming_since.is_none_or(|t: Instant| t.elapsed() < Duration::from_millis(2500)) {
        assert!(Instant::now() < deadline, "the reply never streamed");
        if let Ok(bytes) = printed_rx.recv_timeout(Duration::from_millis(50)) {
            printed.extend(bytes);
            streaming_since.get_or_insert_with(Instant::now);
        }
    }
    second.kill().unwrap(); // SIGKILL: no destructor, no final save.
    second.wait().unwrap();
    reader.join().unwrap();
    printed.extend(printed_rx.try_iter().flatten());
    let second_printed = String::from_utf8_lossy(&printed).into_owned();

    let store = Store::open(&db).await.expect("the history opens after the crash");
    let messages = store.messages(chat).await.unwrap();
    let shape: Vec<(Role, MessageStatus)> = messages.iter().map(|m| (m.role, m.status)).collect();
    assert_eq!(
        shape,
        [
            (Role::User, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Complete),
            (Role::User, MessageStatus::Complete),
            (Role::Assistant, MessageStatus::Interrupted),
        ]
    );
    assert_eq!(messages[0].content, "Tell me about the sea.");
    assert_eq!(messages[1].content, first_reply.strip_suffix('\n').unwrap());
    assert_eq!(messages[2].content, "Now tell me about the mountains, at length.");
    let saved = &messages[3].content;
    assert!(!saved.is_empty(), "2.5 s of streaming left nothing on disk");
    assert!(second_printed.starts_with(saved.as_str()), "the saved reply is not what was streamed");
    // At most one flush interval (and the kill's latency) of text is lost: at this model's speed
    // well under the 2.5 s streamed.
    assert!(saved.len() * 2 > second_printed.len(), "saved {} of {} bytes", saved.len(), second_printed.len());
}

/// A tmpfs of `size` mounted at `dir`, unmounted when dropped (the disk that fills up).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(dir: &Path, size: &str) -> SmallDisk {
        std::fs::create_dir_all(dir).unwrap();
        let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(dir).status();
        assert!(
            mounted.is_ok_and(|s| s.success()),
            "this test mounts a small tmpfs to fill it up: it needs root (CAP_SYS_ADMIN), as scripts/setup.sh's machines have"
        );
        SmallDisk(dir.to_path_buf())
    }

    /// Writes until nothing more fits.
    fn fill(&self) -> PathBuf {
        let filler = self.0.join("filler");
        let mut file = std::fs::File::create(&filler).unwrap();
        let block = vec![0u8; 64 << 10];
        while file.write_all(&block).is_ok() {}
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// The disk fills up while a reply streams: its last save fails, the user is told in words, and
/// once space is free again the history has the question and the reply up to its last save,
/// marked interrupted.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_under_a_reply_costs_words_not_the_chat() {
    let dir = tempfile::tempdir().unwrap();
    let disk = SmallDisk::mount(&dir.path().join("tiny"), "4m");
    let db = disk.0.join("hearth.db");

    let mut chat = spawn_chat(&db, None, 300);
    writeln!(chat.stdin.take().unwrap(), "Tell me about the sea, at length.").unwrap();
    let mut stdout = chat.stdout.take().unwrap();
    let mut first = [0u8; 64];
    let streamed = stdout.read(&mut first).unwrap();
    assert!(streamed > 0, "the reply never streamed");
    thread::sleep(Duration::from_millis(1200)); // A few flushes in.
    let filler = disk.fill();
    let mut printed = first[..streamed].to_vec();
    stdout.read_to_end(&mut printed).unwrap();
    let output = chat.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the failed save is in the exit status");
    assert!(stderr.contains("error: the reply could not be saved ("), "{stderr}");
    assert!(stderr.contains("free disk space, then use Continue"), "{stderr}");

    std::fs::remove_file(filler).unwrap();
    let store = Store::open(&db).await.expect("the history opens once there is space");
    let chat = store.list_chats().await.unwrap()[0].id;
    let messages = store.messages(chat).await.unwrap();
    let shape: Vec<(Role, MessageStatus)> = messages.iter().map(|m| (m.role, m.status)).collect();
    assert_eq!(shape, [(Role::User, MessageStatus::Complete), (Role::Assistant, MessageStatus::Interrupted)]);
    assert_eq!(messages[0].content, "Tell me about the sea, at length.");
    let saved = &messages[1].content;
    let printed = String::from_utf8_lossy(&printed);
    assert!(!saved.is_empty() && printed.starts_with(saved.as_str()), "saved {saved:?} of {printed:?}");
}
