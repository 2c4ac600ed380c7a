//! A local stand-in for the Hugging Face hub's file endpoint
//! (`HEAD`/`GET /{owner}/{name}/resolve/{revision}/{file}` with the `ETag`, `X-Repo-Commit` and
//! `Content-Length` headers hf-hub reads), serving files from memory; and a `tokenizer.json`
//! built from a GGUF file's own vocabulary, so the tokenizer served is the model's real one.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::{Value, json};

pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

#[derive(Default)]
pub struct Hub {
    /// (repo, file) → bytes.
    pub files: HashMap<(String, String), Vec<u8>>,
    pub downloads: AtomicUsize,
}

/// Serves `hub` on a free port; returns the endpoint URL.
pub async fn start(hub: Hub) -> (String, Arc<Hub>) {
    let hub = Arc::new(hub);
    let app = Router::new().route("/{owner}/{name}/resolve/{revision}/{*file}", any(resolve)).with_state(hub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, hub)
}

async fn resolve(
    State(hub): State<Arc<Hub>>,
    method: Method,
    UrlPath((owner, name, _revision, file)): UrlPath<(String, String, String, String)>,
) -> Response {
    let Some(bytes) = hub.files.get(&(format!("{owner}/{name}"), file)) else {
        return (StatusCode::NOT_FOUND, [("x-error-code", "EntryNotFound")], "Entry not found").into_response();
    };
    let etag = format!("\"{:x}\"", bytes.len() * 2654435761 % 1_000_000_007);
    let headers =
        [(header::ETAG.as_str(), etag), ("x-repo-commit", COMMIT.to_owned()), (header::CONTENT_LENGTH.as_str(), bytes.len().to_string())];
    if method == Method::HEAD {
        return (headers, ()).into_response();
    }
    hub.downloads.fetch_add(1, Ordering::SeqCst);
    (headers, bytes.clone()).into_response()
}

/// A Hugging Face `tokenizer.json` for a GGUF model with a byte-level BPE vocabulary (GPT-2
/// style, as SmolLM2's), from the GGUF's `tokenizer.ggml.*` arrays.
pub fn tokenizer_json_from_gguf(path: &Path) -> Vec<u8> {
    let meta = gguf_arrays(&std::fs::read(path).unwrap());
    let tokens = meta["tokenizer.ggml.tokens"].as_array().unwrap();
    let merges = &meta["tokenizer.ggml.merges"];
    let types = meta["tokenizer.ggml.token_type"].as_array().unwrap();
    let vocab: serde_json::Map<String, Value> =
        tokens.iter().enumerate().map(|(id, t)| (t.as_str().unwrap().to_owned(), json!(id))).collect();
    // Token type 3 is a control token (<|im_start|> …): matched whole, never split.
    let added: Vec<Value> = types
        .iter()
        .enumerate()
        .filter(|(_, t)| t.as_i64() == Some(3))
        .map(|(id, _)| {
            json!({ "id": id, "content": tokens[id], "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true })
        })
        .collect();
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": { "type": "Sequence", "pretokenizers": [
            { "type": "Digits", "individual_digits": true },
            { "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true },
        ] },
        "post_processor": null,
        "decoder": { "type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true },
        "model": { "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
            "vocab": vocab, "merges": merges },
    });
    serde_json::to_vec(&tokenizer).unwrap()
}

/// The array-valued metadata of a GGUF file (v2/v3), by key, as JSON.
fn gguf_arrays(bytes: &[u8]) -> HashMap<String, Value> {
    let mut r = Reader { bytes, at: 0 };
    assert_eq!(r.take(4), b"GGUF");
    let _version = r.u32();
    let _tensors = r.u64();
    let kvs = r.u64();
    let mut out = HashMap::new();
    for _ in 0..kvs {
        let key = r.string();
        let kind = r.u32();
        let value = r.value(kind);
        if value.is_array() {
            out.insert(key, value);
        }
    }
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        s
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    fn string(&mut self) -> String {
        let n = self.u64() as usize;
        String::from_utf8_lossy(self.take(n)).into_owned()
    }
    fn value(&mut self, kind: u32) -> Value {
        match kind {
            0 => json!(self.take(1)[0]),
            1 => json!(self.take(1)[0] as i8),
            2 => json!(u16::from_le_bytes(self.take(2).try_into().unwrap())),
            3 => json!(i16::from_le_bytes(self.take(2).try_into().unwrap())),
            4 => json!(self.u32()),
            5 => json!(self.u32() as i32),
            6 => json!(f32::from_le_bytes(self.take(4).try_into().unwrap())),
            7 => json!(self.take(1)[0] != 0),
            8 => json!(self.string()),
            9 => {
                let item = self.u32();
                let count = self.u64();
                Value::Array((0..count).map(|_| self.value(item)).collect())
            }
            10 => json!(self.u64()),
            11 => json!(self.u64() as i64),
            12 => json!(f64::from_le_bytes(self.take(8).try_into().unwrap())),
            other => panic!("GGUF value type {other}"),
        }
    }
}
