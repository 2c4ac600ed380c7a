//! llama.cpp's own words about a failure: its last error log line, captured in the engine process
//! so a refused load says what llama.cpp said ("unknown model architecture: 'x'") and not a guess.

use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// Error lines since the last `clear`, oldest first (a few: a failure logs its cause, then
/// "failed to load model" on its way out).
static ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());
const KEPT: usize = 16;

/// Forgets the errors so far (before a step whose failure should be explained).
pub(crate) fn clear() {
    ERRORS.lock().expect("log state poisoned").clear();
}

/// What llama.cpp said went wrong since `clear`: its "error loading model: …" cause if it gave
/// one, else its first error line.
pub(crate) fn last_error() -> Option<String> {
    let errors = ERRORS.lock().expect("log state poisoned");
    let cause = errors.iter().find_map(|line| line.split_once("error loading model: ").map(|(_, cause)| cause.to_owned()));
    cause.or_else(|| errors.first().cloned())
}

/// A `tracing` layer that keeps the message of llama.cpp's last error-level log line.
pub struct CaptureLlamaErrors;

impl<S: Subscriber> Layer<S> for CaptureLlamaErrors {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        if *meta.level() != Level::ERROR || meta.target() != "llama-cpp-2" {
            return;
        }
        let mut message = Message(None);
        event.record(&mut message);
        if let Some(text) = message.0.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty()) {
            // "llama_model_load: error loading model: …" → the part after the function name.
            let text = text.split_once(": ").map_or(text.as_str(), |(_, rest)| rest).to_owned();
            let mut errors = ERRORS.lock().expect("log state poisoned");
            if errors.len() < KEPT {
                errors.push(text);
            }
        }
    }
}

struct Message(Option<String>);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}
