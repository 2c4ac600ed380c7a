//! The test suite's stand-in for OpenAI's and Anthropic's APIs as a process of its own, for the
//! end-to-end suite: `cargo run -p hearth-testkit --example fake_provider` prints
//! `listening on http://127.0.0.1:PORT/v1` and serves until killed. The model name picks the
//! answer (see `hearth_testkit::fake_provider`); the accepted key is `fake::GOOD_KEY`.

use hearth_testkit::fake_provider as fake;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    println!("listening on http://{}/v1 (key {})", listener.local_addr().unwrap(), fake::GOOD_KEY);
    fake::serve(listener, Default::default()).await;
}
