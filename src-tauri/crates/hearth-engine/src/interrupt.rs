//! Lets a reply stop the read-ahead's chunk in flight. A draft is read ahead chunk by chunk and
//! gives way between chunks, but a reply asked for mid-chunk waited for it (after a burst of keys,
//! ~40 ms of a ~100 ms TTFT on 2 cores). llama.cpp asks an abort callback between the nodes of a
//! graph: armed while a draft's chunk is read, it stops the chunk the moment a reply is waiting,
//! and llama.cpp drops the chunk's positions from the cache (`llama_decode` returns 2). A chunk
//! past half its expected time is let finish: the reply would read its tokens again, on more
//! threads but beside the window, in about the time that is left.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;

/// llama.cpp's `llama_decode` status for a decode its abort callback stopped.
pub(crate) const ABORTED: i32 = 2;

/// Whether a draft's chunk being read should stop: armed by the reader up to a moment, `replies`
/// counted by whoever queues requests for the engine thread.
pub(crate) struct DraftInterrupt {
    epoch: Instant,
    /// Nanoseconds after `epoch` until which a waiting reply stops the decode (0: disarmed).
    stops_until: AtomicU64,
    replies: Arc<AtomicUsize>,
}

impl DraftInterrupt {
    fn new(replies: Arc<AtomicUsize>) -> Self {
        DraftInterrupt { epoch: Instant::now(), stops_until: AtomicU64::new(0), replies }
    }

    /// Installs the callback on `context`. The box must outlive the context's decodes: the
    /// session keeps it in a field dropped after its context.
    pub(crate) fn install(context: &mut LlamaContext<'_>, replies: Arc<AtomicUsize>) -> Box<Self> {
        let interrupt = Box::new(DraftInterrupt::new(replies));
        let data = std::ptr::from_ref::<DraftInterrupt>(&interrupt).cast_mut().cast::<c_void>();
        // SAFETY: `data` points into the box, which does not move and lives as long as the
        // context (above); `should_stop` only reads through it, from any thread.
        unsafe { context.set_abort_callback(Some(should_stop), data) };
        interrupt
    }

    /// A chunk starts now and should take about `expected` (`None`: not known yet): a reply asked
    /// for in its first half stops it.
    pub(crate) fn arm(&self, expected: Option<Duration>) {
        let until = expected.map_or(Duration::MAX, |expected| self.epoch.elapsed().saturating_add(expected / 2));
        self.stops_until.store(u64::try_from(until.as_nanos()).unwrap_or(u64::MAX).max(1), Ordering::SeqCst);
    }

    /// Nothing is stopped from now on (a reply's own decodes).
    pub(crate) fn disarm(&self) {
        self.stops_until.store(0, Ordering::SeqCst);
    }

    fn stops(&self) -> bool {
        self.replies.load(Ordering::Relaxed) > 0 && u128::from(self.stops_until.load(Ordering::Relaxed)) > self.epoch.elapsed().as_nanos()
    }
}

unsafe extern "C" fn should_stop(data: *mut c_void) -> bool {
    // SAFETY: `data` is the `DraftInterrupt` `install` gave with this callback, still alive.
    let interrupt = unsafe { &*data.cast_const().cast::<DraftInterrupt>() };
    interrupt.stops()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(interrupt: &DraftInterrupt) -> bool {
        // SAFETY: a live `DraftInterrupt`, as llama.cpp is handed.
        unsafe { should_stop(std::ptr::from_ref(interrupt).cast_mut().cast()) }
    }

    #[test]
    fn a_waiting_reply_stops_only_an_armed_chunk_in_its_first_half() {
        let replies = Arc::new(AtomicUsize::new(0));
        let interrupt = DraftInterrupt::new(replies.clone());
        assert!(!asked(&interrupt));
        replies.store(1, Ordering::SeqCst);
        assert!(!asked(&interrupt), "a reply's own decode is never stopped");
        interrupt.arm(None);
        assert!(asked(&interrupt), "a chunk of unknown length is stopped");
        interrupt.arm(Some(Duration::from_secs(60)));
        assert!(asked(&interrupt), "in its first half");
        interrupt.arm(Some(Duration::ZERO));
        assert!(!asked(&interrupt), "past its half: let finish");
        interrupt.arm(None);
        replies.store(0, Ordering::SeqCst);
        assert!(!asked(&interrupt), "only a reply stops a draft");
        replies.store(1, Ordering::SeqCst);
        interrupt.disarm();
        assert!(!asked(&interrupt));
    }
}
