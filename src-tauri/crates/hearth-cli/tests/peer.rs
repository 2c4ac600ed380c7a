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
    let Some(pair) = Pair::start(&[]).await else { return };
    let image = hearth_testkit::images::gradient().data_url();
    let (ours, _) = pair.ask(&image, &[]).await;

    let answer = reply(&ours);
    let more = [("assistant", answer.as_str()), ("user", "And what colour is it?")];
    let (ours_next, _) = pair.ask(&image, &more).await;
    let cached = usage(&ours_next, "/prompt_tokens_details/cached_tokens").unwrap_or_default();
    assert!(cached >= usage(&ours, "/prompt_tokens").unwrap(), "read on from the image's cells: {ours_next}");
}

/// The bounds on an image's tokens (`--image-min-tokens`, `--image-max-tokens`) reach llama.cpp as
/// its server's flags of those names do: a small image enlarged, a large one scaled down, read
/// alike by both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_images_token_bounds_are_llama_servers() {
    let bounds = ["--image-min-tokens", "12", "--image-max-tokens", "16"];
    let Some(pair) = Pair::start(&bounds).await else { return };
    let small = hearth_testkit::images::gradient().data_url();
    let large = hearth_testkit::images::image(hearth_testkit::images::bmp(256, 256, |x, y| [x as u8, y as u8, 64])).data_url();
    let (small, _) = pair.ask(&small, &[]).await;
    let (large, _) = pair.ask(&large, &[]).await;
    // Unbounded, the large image is 81 cells to the small one's 9; bounded, 16 to 12–16.
    let more = usage(&large, "/prompt_tokens").unwrap() - usage(&small, "/prompt_tokens").unwrap();
    assert!(more <= 4, "{large} after {small}");
}

/// `hearth-cli serve` and llama.cpp's `llama-server --mmproj` on tiny-qwen2vl, each given `flags`.
struct Pair {
    served: support::served::Served,
    _server: peer::LlamaServer,
    theirs: String,
}

impl Pair {
    async fn start(flags: &[&str]) -> Option<Pair> {
        let llama_server = hearth_testkit::llama_programs::llama_server()?;
        let dir = model_path().parent().unwrap().join("vision-mrope");
        let (model, projector) = (dir.join("tiny-qwen2vl.gguf"), dir.join("mmproj-tiny-qwen2vl.gguf"));
        let theirs = [&["--mmproj", projector.to_str().unwrap()], flags].concat();
        let server = peer::LlamaServer::start(&llama_server, &model, 2, 2048, 512, &theirs).await.expect("llama-server starts");
        let mut command = Command::new(env!("CARGO_BIN_EXE_hearth-cli"));
        command.arg("serve").arg("--model").arg(&model).args(["--ctx", "2048", "--threads", "2", "--port", "0"]).args(flags);
        let base = format!("{}/v1", server.base_url());
        Some(Pair { served: serve_command(command), _server: server, theirs: base })
    }

    /// Both answers to `image` (a data URL) and a question, then `more` turns: the same prompt
    /// counts and greedy replies asserted; Hearth's answer, and the server's.
    async fn ask(&self, image: &str, more: &[(&str, &str)]) -> (Value, Value) {
        // Hearth writes a line break after an image's marker, llama.cpp's server none: it is given one.
        let conversation = |model: &str, after_image: &str| {
            let text = format!("{after_image}What is in the picture?");
            let parts = json!([{ "type": "image_url", "image_url": { "url": image } }, { "type": "text", "text": text }]);
            let mut messages = vec![json!({ "role": "user", "content": parts })];
            messages.extend(more.iter().map(|(role, content)| json!({ "role": role, "content": content })));
            json!({ "model": model, "max_tokens": 12, "temperature": 0, "messages": messages }).to_string()
        };
        let (status, ours) = post(&self.served.base, conversation(&self.served.model, "")).await;
        assert_eq!(status, 200, "{ours}");
        let (status, peer) = post(&self.theirs, conversation("peer", "\n")).await;
        assert_eq!(status, 200, "{peer}");
        assert_eq!(usage(&ours, "/prompt_tokens"), usage(&peer, "/prompt_tokens"), "{ours} vs {peer}");
        assert_eq!(reply(&ours), reply(&peer), "after {} turns", more.len());
        (ours, peer)
    }
}

fn reply(answer: &Value) -> String {
    answer["choices"][0]["message"]["content"].as_str().unwrap_or_default().to_owned()
}

fn usage(answer: &Value, field: &str) -> Option<u64> {
    answer["usage"].pointer(field).and_then(Value::as_u64)
}
