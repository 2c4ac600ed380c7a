//! The engine on a GPU, proven on every run without one: llama.cpp's Vulkan backend on Mesa's
//! software Vulkan device (lavapipe). `make test` builds the module from the engine's own
//! llama.cpp (scripts/build-backend.sh tests) into a folder beside a link to the CPU's and names
//! it in HEARTH_TEST_VULKAN_MODULES. ggml hides CPU-type Vulkan devices unless asked for them
//! (GGML_VK_VISIBLE_DEVICES), as a user with lavapipe alone wants: the CPU backend is faster.

mod common;

use hearth_core::{ChatMessage, PromptSource, Role};
use hearth_engine::{Engine, HostProgram, LoadParams};

use common::{chat_reply, greedy, model_path, reply, reply_with_logprobs};

const LAVAPIPE_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// An engine process with the Vulkan module and lavapipe visible, or `None` where the module was
/// not built (outside `make test`; CI always builds it).
fn on_lavapipe() -> Option<Engine> {
    lavapipe_program().map(Engine::spawn_with)
}

fn lavapipe_program() -> Option<HostProgram> {
    let modules = hearth_testkit::llama_programs::modules("HEARTH_TEST_VULKAN_MODULES")?;
    let mut program = HostProgram::new(env!("CARGO_BIN_EXE_hearth-engine-host"));
    for (key, value) in [
        (hearth_engine::devices::BACKENDS_DIR_ENV, modules.into_os_string()),
        ("VK_ICD_FILENAMES", LAVAPIPE_ICD.into()),
        ("GGML_VK_VISIBLE_DEVICES", "0".into()),
    ] {
        program.env.push((key.into(), value));
    }
    Some(program)
}

fn params() -> LoadParams {
    LoadParams { n_ctx: Some(2048), n_threads: Some(2), ..LoadParams::default() }
}

/// A chat as short as the proof allows (a short system prompt in place of SmolLM2's default):
/// lavapipe reads a prompt at ~2 tokens a second and writes ~0.7 on 2 cores, so these tests
/// took 250 s with the default prompt and 12-token replies.
fn brief(text: &str) -> Vec<ChatMessage> {
    vec![ChatMessage::new(Role::System, "Be brief."), ChatMessage::new(Role::User, text)]
}

#[tokio::test]
async fn the_model_goes_to_the_gpu_by_itself_and_its_odds_are_the_cpus() {
    let _one = common::one_at_a_time().await;
    let Some(gpu) = on_lavapipe() else { return };
    let report = gpu.devices().await;
    let vulkan = report.devices.iter().find(|d| d.backend == "Vulkan").unwrap_or_else(|| panic!("no Vulkan device: {report:?}"));
    assert!(vulkan.description.contains("llvmpipe"), "{vulkan:?}");
    assert_eq!(report.devices.last().map(|d| d.backend.as_str()), Some("CPU"));

    let info = gpu.load(&model_path(), params()).await.expect("the model loads onto the device");
    assert_eq!((info.offload.backend.as_str(), info.offload.gpu_layers, info.offload.total_layers), ("Vulkan", 30, 30));
    assert!(info.offload.label.contains("llvmpipe") && info.offload.label.ends_with("all 30 layers"), "{}", info.offload.label);

    let cpu = common::spawn_engine();
    let on_cpu = cpu.load(&model_path(), params()).await.unwrap();
    assert_eq!(on_cpu.offload.backend, "CPU");
    // lavapipe multiplies the quantized weights in its own shaders, not with the CPU's kernels
    // (which quantize the activations too), so the two round differently and greedy replies
    // can part from the first token where two tokens' odds are close ("What is the capital of
    // France?": "The capital…" on lavapipe, "L'Étoile…" on the CPU). What must agree is the
    // distribution: the CPU's five likeliest first tokens are among lavapipe's eight likeliest,
    // each within 0.1 of the other's probability (measured: within 0.035). (Eight: the fifth and
    // sixth can be near a tie, ~0.015 each.)
    for prompt in ["What is the capital of France?", "Name three colours of the rainbow."] {
        let (_, on_gpu) = reply_with_logprobs(&gpu, &brief(prompt), greedy(1), 8).await;
        let (_, on_cpu) = reply_with_logprobs(&cpu, &brief(prompt), greedy(1), 8).await;
        let probs = |t: &[hearth_core::TokenLogprob]| -> Vec<(i32, f32)> { t[0].top.iter().map(|c| (c.id, c.logprob.exp())).collect() };
        let (gpu_top, cpu_top) = (probs(&on_gpu), probs(&on_cpu));
        eprintln!("{prompt:?}\n  GPU: {gpu_top:?}\n  CPU: {cpu_top:?}");
        for (id, p) in &cpu_top[..5] {
            let on_gpu = gpu_top.iter().find(|(g, _)| g == id).map(|(_, p)| *p);
            assert!(on_gpu.is_some_and(|g| (g - p).abs() < 0.1), "{prompt:?}: token {id} has p {p} on the CPU, {on_gpu:?} on lavapipe");
        }
    }

    // Pinned in the load settings: the device named takes it; one not here is said, the CPU takes over.
    let pinned = gpu.load(&model_path(), LoadParams { device: Some(vulkan.name.clone()), ..params() }).await.unwrap();
    assert_eq!((pinned.offload.backend.as_str(), pinned.offload.gpu_layers), ("Vulkan", 30));
    let gone = gpu.load(&model_path(), LoadParams { device: Some("CUDA3".into()), ..params() }).await.unwrap();
    assert_eq!((gone.offload.backend.as_str(), gone.offload.gpu_layers), ("CPU", 0));
    let said = gone.offload.fallback.unwrap_or_default();
    assert!(said.contains("CUDA3") && said.contains(&format!("{} found", vulkan.name)), "{said}");
}

/// SmolLM2's architecture and tokenizer with four small random layers (scripts/make-test-models.py):
/// the cache's exactness on the device at a fraction of lavapipe's work (116 s with SmolLM2).
fn tiny_llama() -> std::path::PathBuf {
    let path = model_path().with_file_name("tiny-llama.gguf");
    assert!(path.exists(), "{} is missing: run scripts/setup.sh test (scripts/make-test-models.py)", path.display());
    path
}

#[tokio::test]
async fn a_chats_cache_on_the_device_is_reused_exactly_and_comes_back_after_another_chat() {
    let _one = common::one_at_a_time().await;
    let Some(gpu) = on_lavapipe() else { return };
    let info = gpu.load(&tiny_llama(), params()).await.expect("the model loads onto the device");
    assert_eq!((info.offload.backend.as_str(), info.offload.gpu_layers), ("Vulkan", 4), "{:?}", info.offload);
    let mut chat = brief("One fact about cats?");
    let (first, first_stats) = chat_reply(&gpu, 1, &chat, greedy(4)).await;
    chat.push(ChatMessage::new(Role::Assistant, &first));
    chat.push(ChatMessage::new(Role::User, "And dogs?"));

    // The second turn reads only what is new, and writes what a cold read of the whole writes.
    let (second, stats) = chat_reply(&gpu, 1, &chat, greedy(4)).await;
    assert_eq!(stats.prompt_source, PromptSource::Live);
    assert!(stats.cached_tokens >= first_stats.prompt_tokens, "{stats:?}");
    let second_prompt = stats.prompt_tokens;
    let (cold, cold_stats) = chat_reply(&gpu, 100, &chat, greedy(4)).await;
    assert_eq!((cold_stats.prompt_source, cold_stats.cached_tokens), (PromptSource::New, 0), "{cold_stats:?}");
    assert!(!second.is_empty(), "a reply to compare");
    assert_eq!(second, cold, "the reused cache wrote another reply than a cold read");

    // Another chat answers; the first chat's cache is parked in RAM and put back on the device.
    chat_reply(&gpu, 2, &brief("Hi."), greedy(1)).await;
    chat.push(ChatMessage::new(Role::Assistant, &second));
    chat.push(ChatMessage::new(Role::User, "Which sleeps more?"));
    let (third, stats) = chat_reply(&gpu, 1, &chat, greedy(4)).await;
    assert_eq!(stats.prompt_source, PromptSource::Ram, "{stats:?}");
    assert!(stats.cached_tokens >= second_prompt, "{stats:?}");
    let (cold, _) = chat_reply(&gpu, 101, &chat, greedy(4)).await;
    assert_eq!(third, cold, "the chat restored onto the device wrote another reply than a cold read");
}

#[tokio::test]
async fn a_device_with_too_little_memory_leaves_the_model_on_the_cpu_and_says_why() {
    let _one = common::one_at_a_time().await;
    let Some(mut program) = lavapipe_program() else { return };
    program.env.push((hearth_engine::devices::GPU_MEMORY_LIMIT_ENV.into(), "64".into()));
    let engine = Engine::spawn_with(program);
    let info = engine.load(&model_path(), params()).await.expect("the model loads on the CPU");
    assert_eq!((info.offload.backend.as_str(), info.offload.gpu_layers), ("CPU", 0));
    let why = info.offload.fallback.unwrap_or_default();
    assert!(why.contains("64 MiB free, too little for a layer"), "{why}");
    // A short prompt: from 32 tokens llama.cpp would copy the weights to the device to read it.
    let text = reply(&engine, &brief("What is the capital of France?"), greedy(12), None).await.text;
    assert!(text.contains("Paris"), "{text}");
}
