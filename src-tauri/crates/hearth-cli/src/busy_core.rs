//! `hearth-cli bench`: writing a reply while another program keeps one core busy — the engine's
//! measured choice of decode threads (the default, `hearth-engine/src/threads.rs`) against every
//! core fixed, each on a fresh load; and the same pair with nothing else running, for what the
//! measuring costs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use serde::Serialize;

use hearth_core::{ChatMessage, Role, SamplingParams};
use hearth_engine::{Engine, LoadParams};

use crate::args::BenchArgs;
use crate::bench_kit::reply_with;

/// Long enough for the engine to try both counts a few times.
const REPLY_TOKENS: u32 = 400;
/// Each figure keeps its best of this many replies (noise only ever slows a reply down).
const ROUNDS: usize = 2;
const PROMPT: &str = "Write a long story about a lighthouse keeper and the sea.";

#[derive(Serialize)]
pub struct BusyCoreReport {
    /// Decode speed with one core kept busy by another program: threads chosen by measurement.
    pub busy_core_decode_tps: f64,
    /// The same with every core writing, as a thread count the user sets does.
    pub busy_core_fixed_threads_decode_tps: f64,
    /// The first ÷ the second.
    pub busy_core_speedup: f64,
    /// With nothing else running: measured choice ÷ every core (the cost of trying the other count).
    pub quiet_tuned_decode_ratio: f64,
}

pub async fn run(args: &BenchArgs, load: LoadParams) -> Result<BusyCoreReport, String> {
    let cores = hearth_engine::physical_cores();
    let tuned = LoadParams { n_threads: None, ..load.clone() };
    let fixed = LoadParams { n_threads: Some(cores), ..load };
    let quiet_tuned = best_speed(args, &tuned, false).await?;
    let quiet_fixed = best_speed(args, &fixed, false).await?;
    let busy_tuned = best_speed(args, &tuned, true).await?;
    let busy_fixed = best_speed(args, &fixed, true).await?;
    Ok(BusyCoreReport {
        busy_core_decode_tps: busy_tuned,
        busy_core_fixed_threads_decode_tps: busy_fixed,
        busy_core_speedup: busy_tuned / busy_fixed,
        quiet_tuned_decode_ratio: quiet_tuned / quiet_fixed,
    })
}

/// The best decode speed of `ROUNDS` sampled replies (as the app's defaults sample: no seed) on a
/// fresh load, with a core kept busy meanwhile if `busy`.
async fn best_speed(args: &BenchArgs, load: &LoadParams, busy: bool) -> Result<f64, String> {
    let engine = Engine::spawn();
    engine.load(&args.model, load.clone()).await.map_err(|e| e.to_string())?;
    let history = [ChatMessage::new(Role::User, PROMPT)];
    let sampling = SamplingParams { ignore_eos: true, max_tokens: REPLY_TOKENS, seed: None, ..SamplingParams::default() };
    let spinner = busy.then(Spinner::start);
    let mut best = 0f64;
    for _ in 0..ROUNDS {
        let (_, stats) = reply_with(&engine, &history, sampling.clone(), None).await?;
        best = best.max(stats.decode_tps);
    }
    drop(spinner);
    engine.shutdown();
    Ok(best)
}

/// Another program's work: one thread spinning until dropped.
struct Spinner {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Spinner {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let spinning = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            while !spinning.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        Spinner { stop, thread: Some(thread) }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
