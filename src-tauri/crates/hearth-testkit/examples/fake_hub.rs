//! The test suite's fake Hugging Face hub as a program, for the real app's end-to-end test:
//! `fake_hub MODEL.gguf` serves that model as HuggingFaceTB/SmolLM2-135M-Instruct-GGUF (and a
//! gated repository, and under the welcome screen's starter models' names), prints "listening on URL" and serves until killed.
//! `HEARTH_FAKE_HUB_DELAY_MS` slows each 64 KiB chunk, so that progress can be watched.

use std::time::Duration;

use hearth_testkit::fake_hub::{self, FakeFile, FakeHub, FakeRepo};

#[tokio::main]
async fn main() {
    let model = std::env::args().nth(1).expect("usage: fake_hub MODEL.gguf");
    let bytes = std::fs::read(&model).unwrap_or_else(|e| panic!("{model}: {e}"));
    // The starter ladder's repositories hold the test model too, under their quantization's name.
    let starters: Vec<FakeRepo> = hearth_hub::starter::LADDER
        .iter()
        .map(|rung| {
            let stem = rung.repo.rsplit('/').next().unwrap_or(rung.repo).trim_end_matches("-GGUF").to_ascii_lowercase();
            let file = format!("{stem}-{}.gguf", rung.quant.to_ascii_lowercase());
            FakeRepo { id: rung.repo.into(), gated: false, downloads: 90_000, likes: 800, files: vec![FakeFile::new(&file, bytes.clone())] }
        })
        .collect();
    let hub = FakeHub::new(
        starters
            .into_iter()
            .chain([
                FakeRepo {
                    id: "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF".into(),
                    gated: false,
                    downloads: 48_210,
                    likes: 132,
                    files: vec![FakeFile::new("SmolLM2-135M-Instruct.Q4_1.gguf", bytes)],
                },
                FakeRepo {
                    id: "meta-llama/Llama-3.2-1B-Instruct-GGUF".into(),
                    gated: true,
                    downloads: 1_204_331,
                    likes: 2_210,
                    files: vec![FakeFile::new("Llama-3.2-1B-Instruct-Q4_K_M.gguf", vec![0; 1024])],
                },
            ])
            .collect(),
    );
    if let Some(ms) = std::env::var("HEARTH_FAKE_HUB_DELAY_MS").ok().and_then(|v| v.parse().ok()) {
        hub.faults.lock().unwrap().chunk_delay = Some(Duration::from_millis(ms));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("listening on http://{}", listener.local_addr().unwrap());
    fake_hub::serve(listener, std::sync::Arc::new(hub)).await;
}
