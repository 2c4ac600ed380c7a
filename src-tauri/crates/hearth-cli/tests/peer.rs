//! llama.cpp's own server as a real peer of `hearth-cli serve`: both given the same model and
//! the same request read it alike, token for token. Run in `make test`'s last pass, once the
//! tests' llama.cpp programs are built (hearth-testkit's `llama_programs`).

#[allow(dead_code)] // The bench's own helpers are not all used here.
#[path = "../src/peer.rs"]
mod peer;
mod support;

use std::process::Command;

use serde_json::{Value, json};

use support::model_path;
use support::served::{post, serve_command};

/// A model that places an image in two dimensions (Qwen2-VL's M-RoPE: tiny-qwen2vl beside its
/// projector, scripts/make-test-models.py): Hearth's greedy replies are llama-server's, the first
/// turn and the next, read on from the image's cached cells — its positions are llama.cpp's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_placed_in_two_dimensions_is_read_as_llama_server_reads_it() {
    let Some(llama_server) = hearth_testkit::llama_programs::llama_server() else { return };
    let dir = model_path().parent().unwrap().join("vision-mrope");
    let (model, projector) = (dir.join("tiny-qwen2vl.gguf"), dir.join("mmproj-tiny-qwen2vl.gguf"));
    let server = peer::LlamaServer::start(&llama_server, &model, 2, 2048, 512, &["--mmproj", projector.to_str().unwrap()])
        .await
        .expect("llama-server starts");
    let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
    command.arg("serve").arg("--model").arg(&model).args(["--ctx", "2048", "--threads", "2", "--port", "0"]);
    let served = serve_command(command);
    let theirs = format!("{}/v1", server.base_url());

    let image = hearth_testkit::images::gradient().data_url();
    // Hearth writes a line break after an image's marker, llama.cpp's server none: it is given one.
    let conversation = |model: &str, after_image: &str, more: &[(&str, &str)]| {
        let parts = json!([{ "type": "image_url", "image_url": { "url": image } }, { "type": "text", "text": format!("{after_image}What is in the picture?") }]);
        let mut messages = vec![json!({ "role": "user", "content": parts })];
        messages.extend(more.iter().map(|(role, content)| json!({ "role": role, "content": content })));
        json!({ "model": model, "max_tokens": 12, "temperature": 0, "messages": messages }).to_string()
    };
    let reply = |answer: &Value| answer["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned();
    let usage = |answer: &Value, field: &str| answer["usage"].pointer(field).and_then(Value::as_u64);

    let (status, ours) = post(&served.base, conversation(&served.model, "", &[])).await;
    assert_eq!(status, 200, "{ours}");
    let (status, peer) = post(&theirs, conversation("peer", "\n", &[])).await;
    assert_eq!(status, 200, "{peer}");
    assert_eq!(usage(&ours, "/prompt_tokens"), usage(&peer, "/prompt_tokens"), "{ours} vs {peer}");
    assert_eq!(reply(&ours), reply(&peer), "the first turn");

    let answer = reply(&ours);
    let more = [("assistant", answer.as_str()), ("user", "And what colour is it?")];
    let (_, ours_next) = post(&served.base, conversation(&served.model, "", &more)).await;
    let (_, peer_next) = post(&theirs, conversation("peer", "\n", &more)).await;
    let cached = usage(&ours_next, "/prompt_tokens_details/cached_tokens").unwrap_or_default();
    assert!(cached >= usage(&ours, "/prompt_tokens").unwrap(), "read on from the image's cells: {ours_next}");
    assert_eq!(usage(&ours_next, "/prompt_tokens"), usage(&peer_next, "/prompt_tokens"), "{ours_next} vs {peer_next}");
    assert_eq!(reply(&ours_next), reply(&peer_next), "the next turn, read on from the cache");
}
