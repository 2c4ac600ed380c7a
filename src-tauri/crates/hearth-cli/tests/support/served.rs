//! A `hearth-cli serve` run by a test, and requests to it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A running `hearth-cli serve`, killed when dropped.
pub struct Served {
    pub child: Child,
    /// Its API's address, `http://127.0.0.1:PORT/v1`.
    pub base: String,
    /// The model it serves, as it names it.
    pub model: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` (a `hearth-cli serve`) and waits for the line that says where it listens.
pub fn serve_command(mut command: Command) -> Served {
    let mut child = command.stderr(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (base, model) = loop {
        let line = lines.next().expect("hearth-cli serve ended before listening").unwrap();
        if let Some((_, rest)) = line.split_once(" at ") {
            let base = rest.split_whitespace().next().unwrap().to_owned();
            let model = line.split('"').nth(1).unwrap().to_owned();
            break (base, model);
        }
    };
    // Keep reading its log, so a full pipe never blocks it.
    std::thread::spawn(move || lines.for_each(drop));
    Served { child, base, model }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(120)).build().unwrap()
}

pub async fn post(base: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let response =
        client().post(format!("{base}/chat/completions")).header("content-type", "application/json").body(body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}
