//! A local stand-in for the Hugging Face hub, speaking the endpoints hf-hub and Hearth use:
//! `GET /api/models` (search), `/api/models/{repo}` (info with the commit), `/api/models/{repo}/tree/{rev}`
//! (files with LFS sha256), and `HEAD`/`GET /{repo}/resolve/{rev}/{file}`, which redirects (302,
//! as the real hub does to its CDN) to `/cdn/…`, where byte ranges are honoured (206).
//! Faults on demand: a connection cut after N bytes, a slow stream, a wrong hash, gated repos (401
//! without the token).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub const COMMIT: &str = "c0ffee0123456789abcdef0123456789abcdef01";
pub const TOKEN: &str = "hf_fake_token_for_gated_repos";

pub struct FakeFile {
    pub path: String,
    pub bytes: Arc<Vec<u8>>,
    /// What the listing says the sha256 is (the real one unless a test lies).
    pub sha256: String,
}

impl FakeFile {
    pub fn new(path: &str, bytes: Vec<u8>) -> Self {
        let sha256 = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        FakeFile { path: path.into(), bytes: Arc::new(bytes), sha256 }
    }
}

pub struct FakeRepo {
    pub id: String,
    pub gated: bool,
    pub downloads: u64,
    pub likes: u64,
    pub files: Vec<FakeFile>,
}

#[derive(Default)]
pub struct Faults {
    /// Each body request in turn is cut after this many bytes.
    pub cuts: VecDeque<u64>,
    /// A pause between 64 KiB chunks.
    pub chunk_delay: Option<Duration>,
    /// Each body request in turn goes silent after this many bytes, its connection left open.
    pub stalls: VecDeque<u64>,
    /// The JSON answers go wrong: a search never ends, a tree pages on for ever, a repository's
    /// info goes silent after its headers.
    pub endless_answers: bool,
}

pub struct FakeHub {
    pub repos: Vec<FakeRepo>,
    pub faults: Mutex<Faults>,
    /// Each body request: (file, first byte asked for, bytes sent).
    pub served: Mutex<Vec<(String, u64)>>,
    /// The revision each `resolve` request named.
    pub revisions: Mutex<Vec<String>>,
}

impl FakeHub {
    pub fn new(repos: Vec<FakeRepo>) -> Self {
        FakeHub { repos, faults: Mutex::default(), served: Mutex::default(), revisions: Mutex::default() }
    }

    fn repo(&self, id: &str) -> Option<&FakeRepo> {
        self.repos.iter().find(|r| r.id == id)
    }
}

/// Serves `hub` on a free port of 127.0.0.1; returns its URL.
pub async fn start(hub: FakeHub) -> (String, Arc<FakeHub>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let hub = Arc::new(hub);
    tokio::spawn(serve(listener, hub.clone()));
    (url, hub)
}

pub async fn serve(listener: tokio::net::TcpListener, hub: Arc<FakeHub>) {
    let app = Router::new()
        .route("/api/models", get(search))
        .route("/api/models/{owner}/{name}", get(info))
        .route("/api/models/{owner}/{name}/revision/{rev}", get(info))
        .route("/api/models/{owner}/{name}/tree/{rev}", get(tree))
        .route("/{owner}/{name}/resolve/{rev}/{*file}", any(resolve))
        .route("/cdn/{owner}/{name}/{*file}", any(cdn))
        .with_state(hub);
    axum::serve(listener, app).await.unwrap();
}

fn authorized(repo: &FakeRepo, headers: &HeaderMap) -> bool {
    !repo.gated || headers.get(header::AUTHORIZATION).is_some_and(|v| v == format!("Bearer {TOKEN}").as_str())
}

fn denied() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [("x-error-code", "GatedRepo")],
        Json(json!({"error": "Access to this model is restricted. You must have access to it and be authenticated to access it."})),
    )
        .into_response()
}

fn not_found(what: &str, code: &'static str) -> Response {
    (StatusCode::NOT_FOUND, [("x-error-code", code)], Json(json!({"error": format!("{what} not found")}))).into_response()
}

fn repo_json(repo: &FakeRepo) -> Value {
    json!({
        "_id": format!("id-{}", repo.id),
        "id": repo.id,
        "modelId": repo.id,
        "author": repo.id.split('/').next(),
        "sha": COMMIT,
        "downloads": repo.downloads,
        "likes": repo.likes,
        "lastModified": "2026-10-01T12:00:00.000Z",
        "gated": if repo.gated { json!("manual") } else { json!(false) },
        "private": false,
        "tags": ["gguf"],
        "library_name": "gguf",
    })
}

async fn search(State(hub): State<Arc<FakeHub>>, Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    if hub.faults.lock().unwrap().endless_answers {
        let opening = futures_util::stream::once(async { Ok::<_, std::io::Error>(b"[".to_vec()) });
        let hits = futures_util::stream::repeat_with(|| Ok(br#"{"id":"endless/repo-GGUF","downloads":1},"#.repeat(1024)));
        return Body::from_stream(futures_util::StreamExt::chain(opening, hits)).into_response();
    }
    let words = q.get("search").map(|s| s.to_lowercase()).unwrap_or_default();
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(1000);
    let mut found: Vec<&FakeRepo> = hub.repos.iter().filter(|r| r.id.to_lowercase().contains(&words)).collect();
    found.sort_by_key(|r| std::cmp::Reverse(r.downloads));
    Json(found.into_iter().take(limit).map(repo_json).collect::<Vec<_>>()).into_response()
}

async fn info(State(hub): State<Arc<FakeHub>>, Path(p): Path<Vec<(String, String)>>, headers: HeaderMap) -> Response {
    let id = format!("{}/{}", p[0].1, p[1].1);
    match hub.repo(&id) {
        None => not_found(&id, "RepoNotFound"),
        Some(repo) if !authorized(repo, &headers) => denied(),
        Some(_) if hub.faults.lock().unwrap().endless_answers => {
            Body::from_stream(futures_util::stream::pending::<Result<Vec<u8>, std::io::Error>>()).into_response()
        }
        Some(repo) => Json(repo_json(repo)).into_response(),
    }
}

async fn tree(
    State(hub): State<Arc<FakeHub>>,
    Path((owner, name, rev)): Path<(String, String, String)>,
    Query(q): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let id = format!("{owner}/{name}");
    let Some(repo) = hub.repo(&id) else { return not_found(&id, "RepoNotFound") };
    if !authorized(repo, &headers) {
        return denied();
    }
    if hub.faults.lock().unwrap().endless_answers {
        let page: u64 = q.get("cursor").and_then(|c| c.parse().ok()).unwrap_or(0);
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
        let next = format!("<http://{host}/api/models/{owner}/{name}/tree/{rev}?recursive=true&cursor={}>; rel=\"next\"", page + 1);
        return ([(header::LINK, next)], Json(json!([]))).into_response();
    }
    let mut entries = vec![json!({"type": "file", "oid": "1e2d", "size": 1519, "path": "README.md"})];
    for f in &repo.files {
        entries.push(json!({
            "type": "file",
            "oid": "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b",
            "size": f.bytes.len(),
            "path": f.path,
            // The real hub's shape: the sha256 is `oid`.
            "lfs": {"oid": f.sha256, "size": f.bytes.len(), "pointerSize": 135},
        }));
    }
    Json(entries).into_response()
}

async fn resolve(
    State(hub): State<Arc<FakeHub>>,
    Path((owner, name, rev, file)): Path<(String, String, String, String)>,
    headers: HeaderMap,
) -> Response {
    hub.revisions.lock().unwrap().push(rev);
    let id = format!("{owner}/{name}");
    let Some(repo) = hub.repo(&id) else { return not_found(&id, "RepoNotFound") };
    if !authorized(repo, &headers) {
        return denied();
    }
    let Some(f) = repo.files.iter().find(|f| f.path == file) else { return not_found(&file, "EntryNotFound") };
    let headers = [
        (header::LOCATION.as_str(), format!("/cdn/{owner}/{name}/{file}")),
        ("x-repo-commit", COMMIT.to_owned()),
        (header::ETAG.as_str(), format!("\"{}\"", f.sha256)),
        ("x-linked-etag", format!("\"{}\"", f.sha256)),
        ("x-linked-size", f.bytes.len().to_string()),
    ];
    (StatusCode::FOUND, headers).into_response()
}

async fn cdn(
    State(hub): State<Arc<FakeHub>>,
    method: Method,
    Path((owner, name, file)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> Response {
    let id = format!("{owner}/{name}");
    let Some(f) = hub.repo(&id).and_then(|r| r.files.iter().find(|f| f.path == file)) else {
        return not_found(&file, "EntryNotFound");
    };
    let len = f.bytes.len() as u64;
    let range = headers.get(header::RANGE).and_then(|v| v.to_str().ok()).and_then(|v| {
        let (a, b) = v.strip_prefix("bytes=")?.split_once('-')?;
        let start: u64 = a.parse().ok()?;
        let end: u64 = if b.is_empty() { len - 1 } else { b.parse::<u64>().ok()?.min(len - 1) };
        (start <= end).then_some((start, end))
    });
    let (status, start, end) = match range {
        Some((s, e)) => (StatusCode::PARTIAL_CONTENT, s, e + 1),
        None => (StatusCode::OK, 0, len),
    };
    let mut out = vec![
        (header::CONTENT_LENGTH.as_str(), (end - start).to_string()),
        (header::ACCEPT_RANGES.as_str(), "bytes".to_owned()),
        (header::ETAG.as_str(), format!("\"{}\"", f.sha256)),
        // hf-hub's metadata request reads the commit from the response it ends at.
        ("x-repo-commit", COMMIT.to_owned()),
    ];
    if status == StatusCode::PARTIAL_CONTENT {
        out.push((header::CONTENT_RANGE.as_str(), format!("bytes {start}-{}/{len}", end - 1)));
    }
    let body = if method == Method::HEAD {
        Body::empty()
    } else {
        let (cut, delay, stall) = {
            let mut faults = hub.faults.lock().unwrap();
            (faults.cuts.pop_front(), faults.chunk_delay, faults.stalls.pop_front())
        };
        hub.served.lock().unwrap().push((file.clone(), start));
        let body = body_stream(f.bytes.clone(), start, end.min(start.saturating_add(stall.unwrap_or(u64::MAX))), cut, delay);
        match stall {
            // What it has, then silence, the connection open.
            Some(_) => Body::from_stream(futures_util::StreamExt::chain(body, futures_util::stream::pending())),
            None => Body::from_stream(body),
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    for (k, v) in out {
        response.headers_mut().insert(header::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
    }
    response
}
/// The body in 64 KiB chunks; after `cut` bytes, an error, which drops the connection mid-body.
fn body_stream(
    bytes: Arc<Vec<u8>>,
    start: u64,
    end: u64,
    cut: Option<u64>,
    delay: Option<Duration>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures_util::stream::unfold((start, 0u64), move |(at, sent)| {
        let bytes = bytes.clone();
        async move {
            if at >= end {
                return None;
            }
            if cut.is_some_and(|c| sent >= c) {
                return Some((Err(std::io::Error::other("connection cut by the test")), (end, sent)));
            }
            if let Some(d) = delay {
                tokio::time::sleep(d).await;
            }
            let mut next = (at + 65_536).min(end);
            if let Some(c) = cut {
                next = next.min(at + (c - sent).max(1));
            }
            let chunk = bytes[at as usize..next as usize].to_vec();
            Some((Ok(chunk), (next, sent + (next - at))))
        }
    })
}
