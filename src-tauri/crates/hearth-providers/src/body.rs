//! What a provider sends is read within bounds: a body that should be small (an error, a model
//! list, one that should have been a stream) only up to a cap and a deadline, and given up on
//! Stop; a stream with no event line over [`LINE_CAP`] and no more than [`STREAM_CAP`] in all, so
//! a server that sends gigabytes, or one endless line, costs neither memory nor the app's time.

use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use hearth_core::CancelFlag;

/// Most of an error body (or another short answer) that is read.
pub const BODY_CAP: usize = 64 << 10;
/// Most of a model list that is read (OpenRouter's hundreds of models take ~1 MiB).
pub const LIST_CAP: usize = 16 << 20;
/// The longest line of an event stream.
pub const LINE_CAP: usize = 1 << 20;
/// The most one streamed reply may send.
pub const STREAM_CAP: u64 = 256 << 20;

/// A body read whole, but only its first `cap` bytes (the rest is left unread), only until
/// `within` has passed, and not at all once `cancel` is raised (`None` then). `full` says
/// whether the cap was reached.
pub async fn bounded_text(mut response: reqwest::Response, cap: usize, within: Duration, cancel: &CancelFlag) -> Option<Bounded> {
    let mut body = Vec::new();
    {
        let read = async {
            while body.len() < cap {
                match response.chunk().await {
                    Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                    Ok(None) | Err(_) => break,
                }
            }
        };
        tokio::select! {
            _ = cancel.cancelled() => return None,
            _ = tokio::time::timeout(within, read) => {}
        }
    }
    let full = body.len() >= cap;
    body.truncate(cap);
    Some(Bounded { text: String::from_utf8_lossy(&body).into_owned(), full })
}

pub struct Bounded {
    pub text: String,
    /// The cap was reached: more may have followed.
    pub full: bool,
}

/// Why a stream was cut short by us.
#[derive(Debug, thiserror::Error)]
pub enum StreamFault {
    #[error(transparent)]
    Transport(reqwest::Error),
    #[error("{0}")]
    TooLong(String),
}

/// `stream` with the caps on lines and total size enforced: past either, it ends in an error.
pub fn capped(stream: impl Stream<Item = reqwest::Result<Bytes>>) -> impl Stream<Item = Result<Bytes, StreamFault>> {
    let (mut total, mut line) = (0u64, 0usize);
    stream.map(move |chunk| {
        let chunk = chunk.map_err(StreamFault::Transport)?;
        total += chunk.len() as u64;
        line = match chunk.iter().rposition(|&b| b == b'\n' || b == b'\r') {
            Some(end) => chunk.len() - end - 1,
            None => line + chunk.len(),
        };
        if line > LINE_CAP {
            return Err(StreamFault::TooLong(format!("an event line longer than {} MiB", LINE_CAP >> 20)));
        }
        if total > STREAM_CAP {
            return Err(StreamFault::TooLong(format!("more than {} MiB for one reply", STREAM_CAP >> 20)));
        }
        Ok(chunk)
    })
}
