//! hearth-hub against a local fake of the Hugging Face hub (real HTTP on 127.0.0.1, real files:
//! the SmolLM2 GGUF and generated ones): search → pick → fit → download → verified → listed →
//! loaded → chat; and the faults: cuts at random offsets, pause/resume, a restart, a wrong hash,
//! a full disk, 404, a gated repository, a dead network, a path climbing out of the cache.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_core::{CancelFlag, ChatBackend, ChatMessage, GenEvent, KvType, ReplyRequest, Role, SamplingParams};
use hearth_hub::{
    Download, DownloadState, Downloads, FitVerdict, Hub, HubCache, HubConfig, HubError, Library, Memory, ModelSource, RetryPolicy, fit,
    group_quants,
};
use hearth_testkit::fake_hub::{COMMIT, FakeFile, FakeHub, FakeRepo, TOKEN, start};
use sha2::{Digest, Sha256};

const SMOL: &str = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF";
const SMOL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const BULK: &str = "hearth-test/bulk-GGUF";
const VISION: &str = "hearth-test/vision-GGUF";
const GATED: &str = "meta-llama/Llama-3.2-1B-Instruct-GGUF";

fn model_bytes() -> Vec<u8> {
    let path = std::env::var_os("HEARTH_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/SmolLM2-135M-Instruct.Q4_1.gguf")
    });
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (run scripts/fetch-model.sh target/test-data)", path.display()))
}

/// The test projector made for SmolLM2 (`scripts/make-test-models.py`).
fn projector_bytes() -> Vec<u8> {
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../target/test-data/models/vision/mmproj-hearth-test.gguf");
    std::fs::read(&model).unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup.sh)", model.display()))
}

/// Bytes that look random (a generated "model" for transfer tests).
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn repos() -> Vec<FakeRepo> {
    let mut lying = FakeFile::new("bulk.Q2_K.gguf", noise(300_000, 9));
    lying.sha256 = sha(b"something else");
    vec![
        FakeRepo { id: SMOL.into(), gated: false, downloads: 51_234, likes: 87, files: vec![FakeFile::new(SMOL_FILE, model_bytes())] },
        FakeRepo {
            id: BULK.into(),
            gated: false,
            downloads: 12,
            likes: 0,
            files: vec![
                FakeFile::new("bulk.Q8_0.gguf", noise(6 << 20, 1)),
                FakeFile::new("F16/bulk-F16-00001-of-00002.gguf", noise(1 << 20, 2)),
                FakeFile::new("F16/bulk-F16-00002-of-00002.gguf", noise(700_000, 3)),
                lying,
            ],
        },
        FakeRepo {
            id: VISION.into(),
            gated: false,
            downloads: 7,
            likes: 1,
            files: vec![
                FakeFile::new("smol-vision-Q4_1.gguf", model_bytes()),
                FakeFile::new("mmproj-smol-vision-Q8_0.gguf", noise(50_000, 5)),
                FakeFile::new("mmproj-smol-vision-f16.gguf", projector_bytes()),
            ],
        },
        FakeRepo {
            id: GATED.into(),
            gated: true,
            downloads: 99_000,
            likes: 1_200,
            files: vec![FakeFile::new("Llama-3.2-1B-Instruct-Q4_K_M.gguf", noise(4096, 4))],
        },
    ]
}

struct Env {
    dir: tempfile::TempDir,
    fake: Arc<FakeHub>,
    hub: Hub,
    cache: HubCache,
}

impl Env {
    async fn new() -> Env {
        let (url, fake) = start(FakeHub::new(repos())).await;
        let dir = tempfile::tempdir().unwrap();
        let config = HubConfig { endpoint: Some(url), answer_deadline: Some(Duration::from_secs(2)), ..HubConfig::default() };
        let hub = Hub::new(&config).unwrap();
        let cache = HubCache::new(dir.path().join("hf-cache"));
        Env { dir, fake, hub, cache }
    }

    fn downloads(&self) -> Downloads {
        let policy = RetryPolicy {
            max_attempts: 8,
            first_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(200),
            idle: Duration::from_secs(2),
        };
        Downloads::new(self.hub.clone(), self.cache.clone(), self.dir.path().join("downloads.json"), policy)
    }

    fn library(&self) -> Library {
        Library::new(self.cache.clone(), self.dir.path().join("models"), self.dir.path().join("imports.json"))
    }

    fn starts_served(&self, file: &str) -> Vec<u64> {
        self.fake.served.lock().unwrap().iter().filter(|(f, _)| f == file).map(|(_, s)| *s).collect()
    }
}

/// Every state a download passes through, as its watchers hear it.
fn record(downloads: &Downloads) -> Arc<Mutex<Vec<Download>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    downloads.watch(move |d| sink.lock().unwrap().push(d.clone()));
    seen
}

async fn wait_until(downloads: &Downloads, id: &str, done: impl Fn(&Download) -> bool) -> Download {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(d) = downloads.list().into_iter().find(|d| d.id == id)
            && done(&d)
        {
            return d;
        }
        assert!(Instant::now() < deadline, "download {id} never got there: {:?}", downloads.list());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn finished(d: &Download) -> bool {
    matches!(d.state, DownloadState::Done | DownloadState::Failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_pick_fit_download_list_load_and_chat() {
    let env = Env::new().await;
    let found = env.hub.search("smollm2", 20).await.unwrap();
    assert_eq!(found.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), [SMOL]);
    assert_eq!((found[0].downloads, found[0].likes, found[0].gated), (51_234, 87, false));
    assert_eq!(found[0].updated_at.as_deref(), Some("2026-10-01T12:00:00.000Z"));
    let all = env.hub.search("", 20).await.unwrap();
    assert_eq!(all[0].id, GATED, "most downloaded first");
    assert!(all[0].gated);

    // The bulk repository: a split F16 is one entry; the listing's hashes come along.
    let bulk = group_quants(&env.hub.repo_files(BULK).await.unwrap());
    let summary: Vec<(&str, usize)> = bulk.iter().map(|q| (q.quant.as_str(), q.files.len())).collect();
    assert_eq!(summary, [("Q2_K", 1), ("F16", 2), ("Q8_0", 1)]);

    // The fit comes from the header alone, read in ranges: no request asks for more than the start.
    let files = env.hub.repo_files(SMOL).await.unwrap();
    let header = env.hub.header(SMOL, &files[0]).await.unwrap();
    assert!(env.starts_served(SMOL_FILE).iter().all(|&s| s == 0));
    let facts = header.facts();
    assert_eq!(
        (facts.architecture.as_deref(), facts.quantization.as_deref(), facts.context_length),
        (Some("llama"), Some("Q4_1"), Some(8192))
    );
    let estimate = fit::estimate(facts.clone(), &header.shape().unwrap(), files[0].size, Some(8192), KvType::F16, fit::available_memory());
    assert_eq!(estimate.kv_cache_bytes, 180 << 20);
    assert_eq!(estimate.verdict, FitVerdict::Fits, "{estimate:?}");
    let tiny = Memory { free_ram: 100 << 20, free_vram: None };
    assert_eq!(fit::estimate(facts, &header.shape().unwrap(), files[0].size, None, KvType::F16, tiny).verdict, FitVerdict::TooLarge);

    let downloads = env.downloads();
    let seen = record(&downloads);
    let started = downloads.start(SMOL, "Q4_1", &[SMOL_FILE.to_owned()]).await.unwrap();
    let done = wait_until(&downloads, &started.id, finished).await;
    assert_eq!(done.state, DownloadState::Done, "{done:?}");
    assert_eq!(done.done_bytes, files[0].size);
    let states: Vec<DownloadState> = seen.lock().unwrap().iter().map(|d| d.state).collect();
    assert!(states.contains(&DownloadState::Verifying), "{states:?}");

    // The standard cache layout: a snapshot link to the blob named by its sha256, refs/main.
    let path = PathBuf::from(done.model_path.unwrap());
    let repo_dir = env.cache.repo_dir(SMOL);
    assert_eq!(path, repo_dir.join("snapshots").join(COMMIT).join(SMOL_FILE));
    let blob = std::fs::canonicalize(&path).unwrap();
    assert_eq!(blob, repo_dir.join("blobs").join(files[0].sha256.as_ref().unwrap()).canonicalize().unwrap());
    assert_eq!(sha(&std::fs::read(&blob).unwrap()), *files[0].sha256.as_ref().unwrap());
    assert_eq!(std::fs::read_to_string(repo_dir.join("refs/main")).unwrap(), COMMIT);

    let listed = env.library().list(Some(&path));
    assert_eq!(listed.len(), 1, "{listed:?}");
    let model = &listed[0];
    assert_eq!((model.source, model.repo.as_deref(), model.loaded), (ModelSource::HubCache, Some(SMOL), true));
    assert_eq!(model.facts.as_ref().unwrap().quantization.as_deref(), Some("Q4_1"));

    // Loaded by the engine (in this process: the engine process is tested in hearth-engine) and
    // chatted with.
    let engine = hearth_engine::LocalEngine::spawn();
    let params = hearth_engine::LoadParams { n_ctx: Some(2048), n_threads: Some(2), ..Default::default() };
    engine.load(&path, params).await.unwrap();
    let question = "What is the capital of France? Answer in one sentence.";
    let request = ReplyRequest::new(vec![ChatMessage::new(Role::User, question)], SamplingParams::greedy(48), CancelFlag::new());
    let mut stream = engine.start_reply(request).unwrap();
    let mut reply = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(d) => reply.push_str(&d),
            GenEvent::Finished { .. } => break,
            GenEvent::Failed(e) => panic!("{e}"),
            GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => unreachable!("not asked for"),
        }
    }
    assert!(reply.contains("Paris"), "{reply:?}");
    engine.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_cut_at_random_offsets_resume_to_the_right_hash() {
    let env = Env::new().await;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    // Each cut at most 1 MiB after its request's start: four cuts end by 4 MiB, so every one of
    // them falls inside the 6 MiB file (cuts of up to 2 MiB could fall past its end after three
    // resumes, and the download then needed one request fewer than counted below).
    let offsets: Vec<u64> = noise(4 * 8, seed).chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap()) % (1 << 20) + 1).collect();
    println!("seed {seed}: cuts after {offsets:?} bytes");
    env.fake.faults.lock().unwrap().cuts = offsets.iter().copied().collect();
    let downloads = env.downloads();
    let seen = record(&downloads);
    let file = "bulk.Q8_0.gguf".to_owned();
    let started = downloads.start(BULK, "Q8_0", std::slice::from_ref(&file)).await.unwrap();
    let done = wait_until(&downloads, &started.id, finished).await;
    assert_eq!(done.state, DownloadState::Done, "seed {seed}: {done:?}");
    let bytes = std::fs::read(done.model_path.unwrap()).unwrap();
    assert_eq!(bytes, noise(6 << 20, 1), "seed {seed}");
    // Each retry asked for the rest, from where the last one stopped (what arrived before the
    // cut, at most the bytes sent: the cut can drop some in flight).
    let starts = env.starts_served(&file);
    assert_eq!(starts.len(), 5, "seed {seed}: {starts:?}");
    let mut sent = 0;
    for (i, cut) in offsets.iter().enumerate() {
        sent += cut;
        assert!(starts[i + 1] >= starts[i] && starts[i + 1] <= sent, "seed {seed}: {starts:?}");
    }
    // A cut before the response's headers arrive is retried by hf-hub's request itself; the
    // ones mid-body are the download's own retries, which the window hears of.
    let retries = seen.lock().unwrap().iter().filter(|d| d.state == DownloadState::Retrying).count();
    assert!((1..=4).contains(&retries), "{retries}");
}

/// A connection that goes silent is given up after the idle time and asked again from where it
/// stopped, at the commit the download was planned on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_connection_is_asked_again_after_the_idle_time() {
    let env = Env::new().await;
    env.fake.faults.lock().unwrap().stalls = [1 << 20, 3 << 20].into_iter().collect();
    let downloads = env.downloads();
    let seen = record(&downloads);
    let file = "bulk.Q8_0.gguf".to_owned();
    let started = downloads.start(BULK, "Q8_0", std::slice::from_ref(&file)).await.unwrap();
    let done = wait_until(&downloads, &started.id, finished).await;
    assert_eq!(done.state, DownloadState::Done, "{done:?}");
    assert_eq!(std::fs::read(done.model_path.unwrap()).unwrap(), noise(6 << 20, 1));
    assert_eq!(env.starts_served(&file), [0, 1 << 20, 4 << 20], "each retry asks for the rest");
    let stalled = seen.lock().unwrap().iter().filter_map(|d| d.error.clone()).find(|e| e.contains("sent nothing"));
    assert_eq!(stalled.as_deref(), Some("the hub sent nothing of bulk.Q8_0.gguf for 2 s after 1048576 bytes"));
    let revisions = env.fake.revisions.lock().unwrap().clone();
    assert!(!revisions.is_empty() && revisions.iter().all(|r| r == COMMIT), "{revisions:?}");
}

/// A vision model's repository: the picker offers the model, not its projectors, and its
/// download brings the projector beside it, where the engine finds it and reads images.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vision_model_downloads_with_its_projector_and_loads_with_it() {
    let env = Env::new().await;
    let quants = group_quants(&env.hub.repo_files(VISION).await.unwrap());
    let projector = projector_bytes();
    let listed: Vec<(&str, Option<&str>)> = quants.iter().map(|q| (q.quant.as_str(), q.projector.as_deref())).collect();
    assert_eq!(listed, [("Q4_1", Some("mmproj-smol-vision-f16.gguf"))]);
    assert_eq!(quants[0].size_bytes, (model_bytes().len() + projector.len()) as u64);

    let downloads = env.downloads();
    let started = downloads.start(VISION, "Q4_1", &quants[0].files).await.unwrap();
    assert_eq!(started.total_bytes, quants[0].size_bytes, "the projector is part of the download");
    let done = wait_until(&downloads, &started.id, finished).await;
    assert_eq!(done.state, DownloadState::Done, "{done:?}");
    let model = PathBuf::from(done.model_path.unwrap());
    let beside = model.with_file_name("mmproj-smol-vision-f16.gguf");
    assert_eq!(std::fs::read(&beside).unwrap(), projector);
    assert!(!model.with_file_name("mmproj-smol-vision-Q8_0.gguf").exists(), "one projector, not every one");
    let listed = env.library().list(None);
    assert_eq!(listed.iter().filter(|m| m.repo.as_deref() == Some(VISION)).count(), 1, "the projector is no model: {listed:?}");

    let engine = hearth_engine::LocalEngine::spawn();
    let params = hearth_engine::LoadParams { n_ctx: Some(1024), n_threads: Some(2), ..Default::default() };
    let info = engine.load(&model, params).await.unwrap();
    assert_eq!(info.projector.as_deref(), Some(beside.to_str().unwrap()), "{info:?}");
    assert_eq!(info.projectors, [beside.display().to_string()], "what its load settings offer");
    engine.shutdown();
}

/// Two downloads at once, one of them a split model's two parts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_model_downloads_all_its_parts_beside_another_download() {
    let env = Env::new().await;
    env.fake.faults.lock().unwrap().chunk_delay = Some(Duration::from_millis(20));
    let downloads = env.downloads();
    let seen = record(&downloads);
    let parts = ["F16/bulk-F16-00001-of-00002.gguf".to_owned(), "F16/bulk-F16-00002-of-00002.gguf".to_owned()];
    let other = downloads.start(BULK, "Q8_0", &["bulk.Q8_0.gguf".to_owned()]).await.unwrap();
    let started = downloads.start(BULK, "F16", &parts).await.unwrap();
    assert_eq!(started.total_bytes, (1 << 20) + 700_000);
    let done = wait_until(&downloads, &started.id, finished).await;
    assert_eq!(done.state, DownloadState::Done, "{done:?}");
    assert_eq!(wait_until(&downloads, &other.id, finished).await.state, DownloadState::Done);
    // Both made progress before either finished.
    let events = seen.lock().unwrap().clone();
    let first_done = events.iter().position(|d| d.state == DownloadState::Done).unwrap();
    for id in [&started.id, &other.id] {
        assert!(events[..first_done].iter().any(|d| &d.id == id && d.done_bytes > 0), "{id} waited for the other");
    }
    for (part, seed, len) in [(&parts[0], 2, 1 << 20), (&parts[1], 3, 700_000)] {
        let path = env.cache.snapshot(BULK, COMMIT, part);
        assert_eq!(std::fs::read(path).unwrap(), noise(len, seed));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_resume_and_a_restart_go_on_from_where_they_stopped() {
    let env = Env::new().await;
    env.fake.faults.lock().unwrap().chunk_delay = Some(Duration::from_millis(15));
    let file = "bulk.Q8_0.gguf".to_owned();
    let downloads = env.downloads();
    let started = downloads.start(BULK, "Q8_0", std::slice::from_ref(&file)).await.unwrap();
    wait_until(&downloads, &started.id, |d| d.done_bytes > 1 << 20).await;
    let paused = downloads.pause(&started.id).unwrap();
    assert_eq!(paused.state, DownloadState::Paused);
    // Its transfer ends (its last bytes written): nothing writes the partial file while paused.
    tokio::time::timeout(Duration::from_secs(30), downloads.settled(&started.id)).await.expect("the transfer ends when paused");
    let sha256 = sha(&noise(6 << 20, 1));
    let partial = env.cache.incomplete(BULK, &sha256);
    let kept = std::fs::metadata(&partial).unwrap().len();
    assert!(kept > 1 << 20, "{kept}");
    assert!(env.library().list(None).is_empty(), "a partial file is not a model");

    // A restart: the app ends mid-download (its runtime is gone), a new one picks it up.
    downloads.resume(&started.id).unwrap();
    wait_until(&downloads, &started.id, |d| d.done_bytes > kept + (1 << 20)).await;
    let state_file = env.dir.path().join("downloads.json");
    assert!(std::fs::read_to_string(&state_file).unwrap().contains("bulk.Q8_0.gguf"));
    // An exit leaves the downloads file as it was while running: stop the task (a pause saves
    // its own state), then put the running state back.
    let while_running = std::fs::read(&state_file).unwrap();
    downloads.pause(&started.id).unwrap();
    tokio::time::timeout(Duration::from_secs(30), downloads.settled(&started.id)).await.expect("the transfer ends when paused");
    std::fs::write(&state_file, while_running).unwrap();
    let at_exit = std::fs::metadata(&partial).unwrap().len();
    env.fake.faults.lock().unwrap().chunk_delay = None;

    let after_restart = env.downloads();
    after_restart.restore();
    let done = wait_until(&after_restart, &started.id, finished).await;
    assert_eq!(done.state, DownloadState::Done, "{done:?}");
    assert_eq!(std::fs::read(done.model_path.unwrap()).unwrap(), noise(6 << 20, 1));
    let starts = env.starts_served(&file);
    assert_eq!(starts.len(), 3, "{starts:?}");
    assert_eq!(starts[1..], [kept, at_exit], "each resume asks for the rest, from what is on disk");
    assert!(!std::fs::read_to_string(&state_file).unwrap().contains("bulk.Q8_0.gguf"), "done downloads are forgotten");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_and_bad_files_are_refused_in_words() {
    let env = Env::new().await;
    let downloads = env.downloads();

    // A wrong hash: the file is removed, never listed.
    let lying = downloads.start(BULK, "Q2_K", &["bulk.Q2_K.gguf".to_owned()]).await.unwrap();
    let failed = wait_until(&downloads, &lying.id, finished).await;
    assert_eq!(failed.state, DownloadState::Failed);
    let error = failed.error.unwrap();
    assert!(error.contains("bulk.Q2_K.gguf arrived damaged") && error.contains("removed"), "{error}");
    assert!(!env.cache.incomplete(BULK, &sha(b"something else")).exists());
    assert!(env.library().list(None).is_empty());

    let cases: Vec<(&str, Result<Download, HubError>, &str)> = vec![
        ("404", downloads.start(BULK, "Q9", &["missing.gguf".to_owned()]).await, "missing.gguf in hearth-test/bulk-GGUF was not found"),
        ("unknown repo", downloads.start("nobody/nothing", "Q4", &["m.gguf".to_owned()]).await, "repository nobody/nothing was not found"),
        ("climbing path", downloads.start(BULK, "Q8_0", &["../../../etc/passwd".to_owned()]).await, "may not climb out"),
        ("bad repo id", downloads.start("../x", "Q8_0", &["m.gguf".to_owned()]).await, "owner/name"),
        ("gated", downloads.start(GATED, "Q4_K_M", &["Llama-3.2-1B-Instruct-Q4_K_M.gguf".to_owned()]).await, "gated or private"),
    ];
    for (name, result, words) in cases {
        let error = result.expect_err(name).to_string();
        assert!(error.contains(words), "{name}: {error}");
    }
    assert!(matches!(env.hub.repo_files(GATED).await, Err(HubError::Auth { .. })));
    env.hub.set_token(Some(TOKEN)).unwrap();
    assert_eq!(env.hub.repo_files(GATED).await.unwrap().len(), 1, "the token opens the gated repository");

    // A dead network fails fast, in words.
    let dead = Hub::new(&HubConfig { endpoint: Some("http://127.0.0.1:9".into()), ..HubConfig::default() }).unwrap();
    let started = Instant::now();
    let error = dead.search("qwen", 10).await.unwrap_err();
    assert!(matches!(error, HubError::Network { .. }) && error.to_string().contains("Check the network"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A hub whose JSON answers go wrong — a search that never ends, a file list that pages on for
/// ever, an answer that goes silent — is refused in words, within the caps and the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_or_silent_answers_are_refused_in_words() {
    let env = Env::new().await;
    env.fake.faults.lock().unwrap().endless_answers = true;
    let error = env.hub.search("anything", 10).await.unwrap_err();
    assert!(matches!(error, HubError::TooLarge { .. }) && error.to_string().contains("too large"), "{error}");
    let error = env.hub.repo_files(BULK).await.unwrap_err();
    assert!(matches!(error, HubError::TooLarge { .. }) && error.to_string().contains("file list of"), "{error}");
    let started = Instant::now();
    let error = env.hub.head_commit(BULK).await.unwrap_err();
    assert!(matches!(error, HubError::Network { .. }) && error.to_string().contains("no whole answer within 2 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    // The hub mended: the same handle answers again.
    env.fake.faults.lock().unwrap().endless_answers = false;
    assert_eq!(env.hub.head_commit(BULK).await.unwrap(), COMMIT);
}

/// A real small filesystem (tmpfs): too small from the start, or filled while downloading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_is_a_clear_error() {
    let env = Env::new().await;
    for (size, fill_while_downloading) in [("2m", false), ("8m", true)] {
        let mount = env.dir.path().join(format!("disk-{size}"));
        std::fs::create_dir_all(&mount).unwrap();
        let status =
            std::process::Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&mount).status().unwrap();
        assert!(status.success(), "mounting a tmpfs needs root (as in CI)");
        let _unmount = Unmount(mount.clone());
        let cache = HubCache::new(mount.join("hub"));
        let policy = RetryPolicy {
            max_attempts: 2,
            first_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(10),
            ..RetryPolicy::default()
        };
        let downloads = Downloads::new(env.hub.clone(), cache.clone(), env.dir.path().join(format!("{size}.json")), policy);
        if fill_while_downloading {
            env.fake.faults.lock().unwrap().chunk_delay = Some(Duration::from_millis(10));
        }
        let started = downloads.start(BULK, "Q8_0", &["bulk.Q8_0.gguf".to_owned()]).await.unwrap();
        if fill_while_downloading {
            wait_until(&downloads, &started.id, |d| d.done_bytes > 1 << 20).await;
            std::fs::write(mount.join("filler"), vec![0u8; 5 << 20]).ok();
        }
        let failed = wait_until(&downloads, &started.id, finished).await;
        env.fake.faults.lock().unwrap().chunk_delay = None;
        assert_eq!(failed.state, DownloadState::Failed, "{size}");
        let error = failed.error.unwrap();
        assert!(
            error.starts_with("the disk is full: bulk.Q8_0.gguf needs") && error.contains("Free some space, then resume"),
            "{size}: {error}"
        );
        assert!(cache.gguf_files().is_empty());
    }
}

struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn the_library_lists_imports_and_deletes_only_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let real = model_bytes();
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("smol.gguf"), &real).unwrap();
    std::fs::write(mine.join("broken.gguf"), &real[..4096]).unwrap();
    let library = Library::new(HubCache::new(dir.path().join("hub")), dir.path().join("models"), dir.path().join("imports.json"));
    assert!(library.list(None).is_empty());

    let linked = library.import(&mine.join("smol.gguf"), hearth_hub::ImportMode::Link).unwrap();
    let copied = library.import(&mine.join("smol.gguf"), hearth_hub::ImportMode::Copy).unwrap();
    assert_eq!((linked.source, copied.source), (ModelSource::Linked, ModelSource::Copied));
    assert!(Path::new(&copied.path).starts_with(dir.path().join("models")));
    let error = library.import(&mine.join("broken.gguf"), hearth_hub::ImportMode::Copy).unwrap_err().to_string();
    assert!(error.contains("broken.gguf is truncated"), "{error}");
    let again = library.import(&mine.join("smol.gguf"), hearth_hub::ImportMode::Copy).unwrap();
    assert!(again.path.ends_with("smol (2).gguf"), "{}", again.path);

    let listed = library.list(None);
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().all(|m| m.facts.as_ref().is_some_and(|f| f.layers == Some(30)) && m.size_bytes == real.len() as u64));

    // Deleting a linked model forgets it; the user's file stays. A copy is deleted.
    library.delete(Path::new(&linked.path)).unwrap();
    assert!(mine.join("smol.gguf").exists());
    library.delete(Path::new(&copied.path)).unwrap();
    assert!(!Path::new(&copied.path).exists());
    assert_eq!(library.list(None).len(), 1);
    let refused = library.delete(&mine.join("broken.gguf")).unwrap_err();
    assert!(matches!(refused, HubError::NotInLibrary { .. }));
    assert!(mine.join("broken.gguf").exists());
}
