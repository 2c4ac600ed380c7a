//! A step's batch decoded on the thread counts chosen for it (`crate::threads`).

use std::time::Instant;

use llama_cpp_2::DecodeError;

use hearth_core::SamplingParams;

use super::Session;
use crate::idle_cores;

impl Session<'_> {
    /// Decodes the step's batch. A one-token step of a sampled reply runs on the thread count
    /// `decode_threads` picks, and is timed for it; its batches read on every core unless the
    /// chooser saw the core it would add taken. A greedy or seeded reply always reads and writes on
    /// every core: llama.cpp's sums (flash attention's among them) depend on the thread count, so a
    /// near-tie could otherwise go another way from one run to the next.
    pub(super) fn decode_step(&mut self) -> Result<(), DecodeError> {
        let sampled = self.running.iter().all(|r| !reproducible(&r.request().sampling));
        let tuned = sampled && self.batch.n_tokens() == 1;
        let decode = if tuned { self.decode_threads.next() } else { self.decode_threads.most() };
        let batch = if sampled { self.decode_threads.batch() } else { self.decode_threads.most() };
        if (decode, batch) != (self.threads.decode, self.threads.batch) {
            self.threads.decode = decode;
            self.threads.batch = batch;
            self.context.set_n_threads(decode as i32, batch as i32);
        }
        let started = Instant::now();
        let decoded = self.context.decode(&mut self.batch);
        if tuned {
            self.decode_threads.record(started.elapsed(), idle_cores::read);
        }
        decoded
    }
}

/// Whether a reply must come out the same each time it is asked for: greedy, or seeded.
fn reproducible(sampling: &SamplingParams) -> bool {
    sampling.temperature <= 0.0 || sampling.seed.is_some()
}
