//! The engine thread's requests: a channel that counts what waits, so a read-ahead gives way the
//! moment another request is waiting (and a reply stops its chunk in flight).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};

use tokio::sync::{mpsc as tokio_mpsc, oneshot};

use hearth_core::{CacheBudgets, GenEvent, ReplyRequest};

use super::LoadRequest;
use crate::kv_memory::ConversationId;

pub(super) enum Request {
    Load(LoadRequest),
    Generate {
        request: ReplyRequest,
        events: tokio_mpsc::UnboundedSender<GenEvent>,
    },
    /// Served in a small context of its own, so the conversation's KV cache stays as it is.
    Aside {
        request: ReplyRequest,
        events: tokio_mpsc::UnboundedSender<GenEvent>,
    },
    /// Drop the model; acknowledged once its memory is freed.
    Unload(oneshot::Sender<()>),
    /// Drop a conversation's KV cache in RAM and on disk (`None`: every conversation's).
    Forget(Option<ConversationId>),
    /// Drop the kept weights of the model at this path (its file is being deleted).
    Release(std::path::PathBuf),
    /// Read ahead a draft the user is typing (see [`hearth_core::ChatBackend::prefill`]); given up the
    /// moment another request arrives. The sender ends it (sent, or dropped unread).
    Prefill(ReplyRequest, oneshot::Sender<()>),
    /// The user's budgets for chats' caches, in force at once.
    CacheBudgets(CacheBudgets),
    /// End the engine thread (after the request in hand).
    Quit,
}

/// The engine thread's requests, counted, so a read-ahead can give way the moment another
/// request is waiting (between its chunks; a reply stops the chunk in flight too).
#[derive(Clone)]
pub(super) struct Requests {
    sender: Sender<Request>,
    waiting: Arc<AtomicUsize>,
    replies: Arc<AtomicUsize>,
}

pub(super) struct Inbox {
    receiver: Receiver<Request>,
    waiting: Arc<AtomicUsize>,
    /// Of those waiting, the replies (`Request::Generate`).
    replies: Arc<AtomicUsize>,
}

pub(super) fn channel() -> (Requests, Inbox) {
    let (sender, receiver) = mpsc::channel();
    let (waiting, replies) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    (Requests { sender, waiting: waiting.clone(), replies: replies.clone() }, Inbox { receiver, waiting, replies })
}

/// The counts `request` is one of: every request waiting, and the replies among them.
fn counts<'a>(request: &Request, waiting: &'a AtomicUsize, replies: &'a AtomicUsize) -> impl Iterator<Item = &'a AtomicUsize> {
    let reply = matches!(request, Request::Generate { .. });
    std::iter::once(waiting).chain(reply.then_some(replies))
}

impl Requests {
    /// Err: the engine thread has ended.
    pub(super) fn send(&self, request: Request) -> Result<(), ()> {
        let counts: Vec<_> = counts(&request, &self.waiting, &self.replies).collect();
        counts.iter().for_each(|count| _ = count.fetch_add(1, Ordering::SeqCst));
        self.sender.send(request).map_err(|_| counts.iter().for_each(|count| _ = count.fetch_sub(1, Ordering::SeqCst)))
    }
}

impl Inbox {
    pub(super) fn recv(&self) -> Result<Request, mpsc::RecvError> {
        Ok(self.taken(self.receiver.recv()?))
    }

    pub(super) fn try_recv(&self) -> Result<Request, mpsc::TryRecvError> {
        Ok(self.taken(self.receiver.try_recv()?))
    }

    fn taken(&self, request: Request) -> Request {
        counts(&request, &self.waiting, &self.replies).for_each(|count| _ = count.fetch_sub(1, Ordering::SeqCst));
        request
    }

    /// The count of replies asked for and not yet taken up, as it changes.
    pub(crate) fn replies_waiting(&self) -> Arc<AtomicUsize> {
        self.replies.clone()
    }

    /// Whether a request is waiting to be served.
    pub(crate) fn has_waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) > 0
    }
}
