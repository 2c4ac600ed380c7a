//! History at scale: 10,000 chats and 1,000,000 messages (one chat of 2,000), in a real SQLite
//! file. Times what the app does when it opens, shows the chat list, opens the long chat,
//! searches, and saves a streaming reply.
//!
//!   cargo bench -p hearth-store --bench scale
//!
//! The seeded file is kept in target/bench-data/ and reused (HEARTH_BENCH_RESEED=1 rebuilds it).
//! Under `cargo test` (no `--bench` argument) the same steps run once at a small scale, so the
//! bench keeps working without costing the test run minutes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sqlx::Connection;

use hearth_core::{HistoryStore, MessageStatus, Role};
use hearth_store::Store;

#[derive(Clone, Copy)]
struct Scale {
    chats: i64,
    messages: i64,
    long_chat: i64,
    runs: usize,
}

const FULL: Scale = Scale { chats: 10_000, messages: 1_000_000, long_chat: 2_000, runs: 15 };
/// The same long chat in a history a hundred times smaller, measured in the same run: the ratio
/// says what a big history costs each operation.
const BASELINE: Scale = Scale { chats: 100, messages: 10_000, long_chat: 2_000, runs: 15 };
const SMOKE: Scale = Scale { chats: 20, messages: 2_000, long_chat: 200, runs: 1 };

const WORDS: &[&str] = &[
    "the",
    "model",
    "reply",
    "context",
    "token",
    "cache",
    "window",
    "sea",
    "mountain",
    "river",
    "history",
    "search",
    "branch",
    "export",
    "import",
    "quantized",
    "weights",
    "layer",
    "prompt",
    "system",
    "user",
    "assistant",
    "fast",
    "memory",
    "disk",
    "stream",
    "flush",
    "title",
    "chat",
    "question",
    "answer",
    "rust",
    "sqlite",
    "index",
    "query",
];

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if std::env::args().any(|a| a == "--bench") {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/bench-data");
        std::fs::create_dir_all(&dir).unwrap();
        let full = runtime.block_on(bench(&dir.join("scale.db"), FULL, std::env::var_os("HEARTH_BENCH_RESEED").is_some()));
        let small = tempfile::tempdir().unwrap();
        let baseline = runtime.block_on(bench(&small.path().join("scale.db"), BASELINE, true));
        println!("\n{:<46} {:>12} {:>12} {:>7} {:>12}", "operation", "10k/1M med.", "100/10k med.", "ratio", "10k/1M worst");
        for ((name, median, worst), (_, base, _)) in full.iter().zip(&baseline) {
            println!(
                "{name:<46} {:>9.2} ms {:>9.2} ms {:>7.2} {:>9.2} ms",
                ms(*median),
                ms(*base),
                median.as_secs_f64() / base.as_secs_f64(),
                ms(*worst)
            );
        }
    } else {
        let dir = tempfile::tempdir().unwrap();
        for (name, median, _) in runtime.block_on(bench(&dir.path().join("scale.db"), SMOKE, true)) {
            println!("{name:<46} {:>9.2} ms", ms(median));
        }
    }
}

type Timing = (&'static str, Duration, Duration);

/// Median and worst time of each operation on a history of `scale`.
async fn bench(path: &Path, scale: Scale, reseed: bool) -> Vec<Timing> {
    let Scale { chats, messages, long_chat, runs } = scale;
    if reseed || !path.exists() {
        let started = Instant::now();
        seed(path, scale).await;
        println!("seeded {chats} chats / {messages} messages in {:.1} s", started.elapsed().as_secs_f64());
    }
    let size = std::fs::metadata(path).unwrap().len();
    println!("{chats} chats / {messages} messages: {:.0} MB, {runs} runs each after one warm-up", size as f64 / 1e6);
    let mut timings = Vec::new();
    let mut report = |name, (median, worst)| timings.push((name, median, worst));
    report("open (migrations checked, crash recovery)", time(runs, || async { Store::open(path).await.unwrap().close().await }).await);
    let store = Store::open(path).await.unwrap();
    let long = store.list_chats().await.unwrap().into_iter().find(|c| c.title == "long chat").unwrap().id;
    report("list all chats", time(runs, || async { assert_eq!(store.list_chats().await.unwrap().len() as i64, chats) }).await);
    report(
        "open the long chat (path + siblings)",
        time(runs, || async { assert!(store.messages(long).await.unwrap().len() as i64 > long_chat * 9 / 10) }).await,
    );
    report(
        "search a word found in most messages",
        time(runs, || async {
            store.search("model", 50).await.unwrap();
        })
        .await,
    );
    report(
        "search a rare phrase",
        time(runs, || async { assert!(!store.search("\"needle in the haystack\"", 50).await.unwrap().is_empty()) }).await,
    );
    let leaf = store.messages(long).await.unwrap().last().unwrap().id;
    let user = store.append_message(long, Some(leaf), Role::User, "one more question", MessageStatus::Complete, None).await.unwrap();
    let reply = store.append_message(long, Some(user.id), Role::Assistant, "", MessageStatus::Streaming, None).await.unwrap();
    let text = std::sync::Mutex::new(String::new());
    report(
        "flush a streaming reply (in the long chat)",
        time(runs, || async {
            let so_far = {
                let mut text = text.lock().unwrap();
                text.push_str("more streamed text ");
                text.clone()
            };
            store.update_reply(reply.id, &so_far, MessageStatus::Streaming, None).await.unwrap();
        })
        .await,
    );
    report(
        "save a user message (FTS indexed)",
        time(runs, || async {
            store
                .append_message(long, Some(user.id), Role::User, "an edited question about the sea", MessageStatus::Complete, None)
                .await
                .unwrap();
        })
        .await,
    );
    // Leave the file as seeded for the next run.
    store.delete_message(long, user.id).await.unwrap();
    store.close().await;
    timings
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Median and worst of `runs` runs, after one untimed run that warms the page cache as a running
/// app would have.
async fn time<F, Fut>(runs: usize, mut f: F) -> (Duration, Duration)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    f().await;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        f().await;
        times.push(started.elapsed());
    }
    times.sort();
    (times[runs / 2], times[runs - 1])
}

/// Creates the schema through the store, then fills it in bulk: one long chat, the rest spread
/// over the other chats, each a chain of user/assistant turns where about every 20th message is
/// a regenerated reply (a sibling, off the path on show).
async fn seed(path: &Path, Scale { chats, messages, long_chat, .. }: Scale) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Store::open(path).await.unwrap().close().await;
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite:{}", path.display())).await.unwrap();
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut random = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let per_chat = (messages - long_chat) / (chats - 1);
    let mut message_id = 0i64;
    let mut tx = conn.begin().await.unwrap();
    for chat in 1..=chats {
        let count = match chat {
            c if c == chats => long_chat,
            c if c == chats - 1 => messages - long_chat - per_chat * (chats - 2),
            _ => per_chat,
        };
        let title = if chat == chats { "long chat".to_owned() } else { format!("chat {chat}") };
        let started_at = 1_700_000_000_000 + chat * 60_000;
        sqlx::query("INSERT INTO chats (id, title, created_at, updated_at, title_source) VALUES (?, ?, ?, ?, 'user')")
            .bind(chat)
            .bind(&title)
            .bind(started_at)
            .bind(started_at + count * 1000)
            .execute(&mut *tx)
            .await
            .unwrap();
        // The path on show alternates question and reply; now and then a reply gets a sibling.
        let mut parent: Option<i64> = None;
        let mut question: Option<i64> = None;
        let mut user_next = true;
        for i in 0..count {
            message_id += 1;
            let sibling = i % 20 == 19 && user_next && question.is_some();
            let role = if user_next && !sibling { Role::User } else { Role::Assistant };
            let words = 10 + random() % 50;
            let mut content: Vec<&str> = (0..words).map(|_| WORDS[(random() % WORDS.len() as u64) as usize]).collect();
            if message_id % (messages / 10) == 0 {
                content.extend(["needle", "in", "the", "haystack"]);
            }
            sqlx::query(
                "INSERT INTO messages (id, chat_id, parent_id, role, content, status, model, created_at, updated_at)
                 VALUES (?, ?, ?, ?, ?, 'complete', ?, ?, ?)",
            )
            .bind(message_id)
            .bind(chat)
            .bind(if sibling { question } else { parent })
            .bind(role.as_str())
            .bind(content.join(" "))
            .bind((role == Role::Assistant).then_some("SmolLM2-135M-Instruct.Q4_1"))
            .bind(started_at + i * 1000)
            .bind(started_at + i * 1000)
            .execute(&mut *tx)
            .await
            .unwrap();
            if !sibling {
                if role == Role::User {
                    question = Some(message_id);
                }
                parent = Some(message_id);
                user_next = !user_next;
            }
        }
        let leaf = parent;
        sqlx::query("UPDATE chats SET current_leaf_id = ? WHERE id = ?").bind(leaf).bind(chat).execute(&mut *tx).await.unwrap();
    }
    tx.commit().await.unwrap();
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}
