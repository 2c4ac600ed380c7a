//! What crosses the process boundary: length-delimited frames (tokio-util's codec, capped), each
//! one JSON message. Requests carry an id; everything the engine sends back about a request is
//! tagged with it.

use std::io::{Read, Write};
use std::path::PathBuf;

use bytes::{Bytes, BytesMut};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tokio_util::codec::{Decoder, Encoder, LengthDelimitedCodec};

use hearth_core::{
    CacheBudgets, CancelFlag, ChatMessage, DeviceReport, GenEvent, LoadParams, ModelInfo, OfferedTools, ReplyRequest, SamplingParams,
};

use crate::{EngineError, HeldMemory};

pub type RequestId = u64;

/// The longest frame either side accepts: far above any real message (a delta is one 40 ms batch
/// of text, a request one conversation), low enough that garbage cannot make us allocate gigabytes.
pub const MAX_FRAME: usize = 16 << 20;

/// App → engine.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToHost {
    Load {
        id: RequestId,
        path: PathBuf,
        params: LoadParams,
        progress: bool,
    },
    Reply {
        id: RequestId,
        aside: bool,
        spec: ReplySpec,
    },
    Cancel {
        id: RequestId,
    },
    Unload {
        id: RequestId,
    },
    /// Read ahead a draft the user is typing; `Prefilled` comes back when it ended.
    Prefill {
        id: RequestId,
        spec: ReplySpec,
    },
    /// Drop a conversation's KV cache in RAM and on disk (its chat was deleted).
    Forget {
        /// `None`: every conversation's.
        conversation: Option<i64>,
    },
    /// Drop the kept weights of the model at `path` (its file is being deleted).
    Release {
        path: PathBuf,
    },
    /// The user's budgets for chats' caches (sent first to every new engine process once set).
    CacheBudgets {
        budgets: CacheBudgets,
    },
    /// What the engine holds: answered at once, whatever the engine thread is doing.
    Usage {
        id: RequestId,
    },
    /// The vectors of `texts` by the embedding model at `model` (on a thread of its own, beside
    /// replies).
    Embed {
        id: RequestId,
        model: PathBuf,
        texts: Vec<String>,
    },
    /// Finish the request in hand and exit.
    Quit,
    /// Test-only: die as llama.cpp does on a failed assertion (honoured only when the engine
    /// process was started with `HEARTH_ENGINE_TEST_HOOKS=1`).
    Abort,
    /// Test-only, likewise: stop sending anything about replies, as a wedged engine would.
    Freeze,
}

/// A reply request without its cancel flag (the flag stays in the app; `Cancel` raises it).
#[derive(Debug, Serialize, Deserialize)]
pub struct ReplySpec {
    pub messages: Vec<ChatMessage>,
    pub sampling: SamplingParams,
    pub continue_last: bool,
    #[serde(default)]
    pub conversation: Option<i64>,
    #[serde(default)]
    pub logprobs: Option<u32>,
    #[serde(default)]
    pub top_probs: Option<u32>,
    #[serde(default)]
    pub raw_prompt: Option<String>,
    #[serde(default)]
    pub tools: Option<OfferedTools>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub template_kwargs: serde_json::Map<String, serde_json::Value>,
}

impl ReplySpec {
    /// What of `request` crosses the pipe, and the cancel flag that stays on this side (its
    /// target is the engine it is sent to).
    pub fn of(request: ReplyRequest) -> (ReplySpec, CancelFlag) {
        let ReplyRequest {
            messages,
            sampling,
            cancel,
            continue_last,
            target: _,
            conversation,
            logprobs,
            top_probs,
            raw_prompt,
            tools,
            template_kwargs,
        } = request;
        (ReplySpec { messages, sampling, continue_last, conversation, logprobs, top_probs, raw_prompt, tools, template_kwargs }, cancel)
    }

    /// The request the engine process serves, stopped by its own `cancel` flag.
    pub fn into_request(self, cancel: CancelFlag) -> ReplyRequest {
        let ReplySpec { messages, sampling, continue_last, conversation, logprobs, top_probs, raw_prompt, tools, template_kwargs } = self;
        ReplyRequest {
            continue_last,
            template_kwargs,
            conversation,
            logprobs,
            top_probs,
            raw_prompt,
            tools,
            ..ReplyRequest::new(messages, sampling, cancel)
        }
    }
}

/// Engine → app.
#[derive(Debug, Serialize, Deserialize)]
pub enum FromHost {
    /// The first frame: the process is up and speaks this protocol.
    Ready {
        pid: u32,
    },
    Progress {
        id: RequestId,
        fraction: f32,
    },
    Loaded {
        id: RequestId,
        /// Boxed: a model's description is many times the other frames' size.
        result: Result<Box<ModelInfo>, EngineError>,
    },
    Event {
        id: RequestId,
        event: GenEvent,
    },
    Unloaded {
        id: RequestId,
    },
    /// The compute devices found, sent once the backends are loaded (unasked: the app needs them
    /// for the fit estimate, and a process that dies before sending them died loading them).
    Devices {
        report: DeviceReport,
    },
    /// The read-ahead `id` ended (read, or given up).
    Prefilled {
        id: RequestId,
    },
    Usage {
        id: RequestId,
        /// Chats' caches kept in RAM (the live chat's is in the context, not counted) and models
        /// kept after another was loaded.
        held: HeldMemory,
    },
    Embedded {
        id: RequestId,
        result: Result<Vec<Vec<f32>>, EngineError>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("the engine's pipe failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("a frame could not be read: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the pipe closed in the middle of a frame")]
    Truncated,
    /// A message longer than a frame may be: refused before it is sent, so the pipe lives on.
    #[error("the request is {:.1} MiB, more than the engine takes at once ({} MiB)", *.bytes as f64 / 1_048_576.0, MAX_FRAME >> 20)]
    TooLarge { bytes: usize },
}

/// A message as the bytes of one frame's body, measured: longer than `MAX_FRAME` is refused here
/// (the writer would fail on it, and a writer that ends takes the engine process with it).
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, FrameError> {
    let json = serde_json::to_vec(message)?;
    if json.len() > MAX_FRAME {
        return Err(FrameError::TooLarge { bytes: json.len() });
    }
    Ok(json)
}

fn codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder().max_frame_length(MAX_FRAME).new_codec()
}

/// Reads whole frames from a blocking pipe.
pub struct FrameReader<R> {
    inner: R,
    codec: LengthDelimitedCodec,
    buffer: BytesMut,
}

impl<R: Read> FrameReader<R> {
    pub fn new(inner: R) -> Self {
        FrameReader { inner, codec: codec(), buffer: BytesMut::with_capacity(64 * 1024) }
    }

    /// The next message; `None` at a clean end of the pipe.
    pub fn read<T: DeserializeOwned>(&mut self) -> Result<Option<T>, FrameError> {
        let mut chunk = [0u8; 64 * 1024];
        loop {
            if let Some(frame) = self.codec.decode(&mut self.buffer)? {
                return Ok(Some(serde_json::from_slice(&frame)?));
            }
            let n = match self.inner.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if n == 0 {
                return if self.buffer.is_empty() { Ok(None) } else { Err(FrameError::Truncated) };
            }
            self.buffer.extend_from_slice(&chunk[..n]);
        }
    }
}

/// Writes one frame per message to a blocking pipe, flushed at once.
pub struct FrameWriter<W> {
    inner: W,
    codec: LengthDelimitedCodec,
    buffer: BytesMut,
}

impl<W: Write> FrameWriter<W> {
    pub fn new(inner: W) -> Self {
        FrameWriter { inner, codec: codec(), buffer: BytesMut::new() }
    }

    pub fn write<T: Serialize>(&mut self, message: &T) -> Result<(), FrameError> {
        self.write_encoded(encode(message)?)
    }

    /// Writes a body [`encode`] measured.
    pub fn write_encoded(&mut self, json: Vec<u8>) -> Result<(), FrameError> {
        self.buffer.clear();
        self.codec.encode(Bytes::from(json), &mut self.buffer)?;
        self.inner.write_all(&self.buffer)?;
        self.inner.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_oversized_or_cut_frames_are_refused() {
        let mut wire = Vec::new();
        let mut writer = FrameWriter::new(&mut wire);
        writer.write(&ToHost::Cancel { id: 7 }).unwrap();
        writer.write(&FromHost::Event { id: 7, event: GenEvent::Delta("héllo".into()) }).unwrap();

        let mut reader = FrameReader::new(wire.as_slice());
        assert!(matches!(reader.read::<ToHost>().unwrap(), Some(ToHost::Cancel { id: 7 })));
        match reader.read::<FromHost>().unwrap() {
            Some(FromHost::Event { id: 7, event: GenEvent::Delta(text) }) => assert_eq!(text, "héllo"),
            other => panic!("{other:?}"),
        }
        assert!(reader.read::<ToHost>().unwrap().is_none());

        // A length prefix past the cap is refused before anything is allocated.
        let huge = ((MAX_FRAME + 1) as u32).to_be_bytes();
        assert!(matches!(FrameReader::new(&huge[..]).read::<ToHost>(), Err(FrameError::Io(_))));
        // A pipe that closes mid-frame.
        let cut = &wire[..wire.len() - 3];
        let mut reader = FrameReader::new(cut);
        reader.read::<ToHost>().unwrap();
        assert!(matches!(reader.read::<FromHost>(), Err(FrameError::Truncated)));
        // Garbage inside a frame.
        let mut garbage = Vec::new();
        FrameWriter::new(&mut garbage).write(&"not a request").unwrap();
        assert!(matches!(FrameReader::new(garbage.as_slice()).read::<ToHost>(), Err(FrameError::Json(_))));
    }
}
