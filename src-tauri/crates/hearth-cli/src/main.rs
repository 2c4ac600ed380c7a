//! hearth-cli: Hearth's engine from a terminal or a script. No Tauri is linked.
//!
//!   hearth-cli chat  --model PATH [--db FILE [--chat ID]] [--system TEXT] [--fresh] [load flags…] [sampling flags…]
//!   hearth-cli chat  --provider KIND [--base-url URL] --model NAME [--db …] [sampling flags…]
//!   hearth-cli models list | inspect PATH | search QUERY | pull REPO FILE
//!   hearth-cli devices [--json]
//!   hearth-cli serve --model PATH [--models-dir DIR] [--host IP] [--port N] [--api-key KEY] [load flags…] [sampling flags…]
//!   hearth-cli bench --model PATH [--threads N] [--turns N] [--json] [--server PATH | --no-server] [--draft FILE]
//!                   [--sections LIST] [--compare FILE] [--record FILE] [--flash-attn X] [--kv-type X]
//!   hearth-cli bench-cut-back --model PATH [--n-ctx N] [--threads N] [--json]

mod args;
mod attach_round;
mod bench;
mod bench_kit;
mod busy_core;
mod chat;
mod check;
mod cut_back;
mod decoding;
mod devices;
mod models;
mod parallel;
mod peer;
mod retrieve_round;
mod serve;
mod switch;
mod tools_round;

use std::process::ExitCode;

const USAGE: &str = "usage:
  hearth-cli chat  --model PATH [--db FILE [--chat ID]] [--system TEXT] [--fresh] [load flags] [sampling flags]
  hearth-cli chat  --provider openai|anthropic|openai-compatible [--base-url URL] --model NAME
                   [--db FILE [--chat ID]] [--system TEXT] [sampling flags]
  hearth-cli models list | inspect PATH | search QUERY | pull REPO FILE
  hearth-cli devices [--json]
  hearth-cli serve --model PATH [--models-dir DIR] [--host 127.0.0.1] [--port 8484] [--api-key KEY]
                   [--allow-origin ORIGIN] [--queue 64] [--read-timeout 30] [load flags] [sampling flags]
  hearth-cli bench --model PATH [--threads N] [--turns N] [--json] [--server PATH | --no-server] [--draft FILE]
                   [--sections LIST] [--compare FILE] [--record FILE] [--flash-attn X] [--kv-type X]
  hearth-cli bench-cut-back --model PATH [--n-ctx N] [--threads N] [--json]

With --provider the replies come from a remote API: OpenAI, Anthropic, or any OpenAI-compatible
server at --base-url (llama.cpp's server, vLLM, Ollama, LM Studio, Groq, OpenRouter …). The key
comes from OPENAI_API_KEY / ANTHROPIC_API_KEY / HEARTH_API_KEY, else from the key saved in the app
(system keychain) for the built-in OpenAI or Anthropic provider. Settings a provider does not take
are not sent (see the app's sampler panel).

models: list the library (Hugging Face cache, Hearth's models folder, imports), inspect a GGUF
file's header (a bad file is an error, exit status 1), search the hub for GGUF repositories, pull a
file (a split model's parts together) into the Hugging Face cache with resume and sha256 checks.
HF_ENDPOINT points at another hub, HF_HUB_CACHE at another cache, HF_TOKEN opens gated repositories.

devices: the compute devices found (name, backend, kind, free/total memory) and each backend module
that could not be used, with the reason. Backends are modules beside the CPU's (libggml-cuda.so,
libggml-vulkan.so): a model goes to the first GPU, as many layers as fit its free memory
(--gpu-layers N to choose, 0 for the CPU alone); HEARTH_DEVICE=cpu leaves every GPU backend
unloaded, HEARTH_BACKENDS_DIR names another folder of modules.

serve answers OpenAI's API (GET /v1/models, POST /v1/chat/completions, streamed or not) with the
model, for editors, scripts and agents: point an OpenAI client at http://127.0.0.1:8484/v1. The
sampling flags are the defaults a request's own fields change (llama.cpp's extra fields — top_k,
min_p, … — are taken too); an unknown or out-of-range field is a 400 naming it. It listens on
loopback only; --host 0.0.0.0 (the network) needs --api-key (or HEARTH_SERVER_KEY), which clients
send as `Authorization: Bearer KEY`. Web pages cannot use it: on loopback only requests addressed
to localhost/127.0.0.1/[::1] are served (no DNS rebinding), a request from a page of another
origin is refused unless --allow-origin ORIGIN (e.g. https://chat.example.org, or *) names it,
and a body must be sent as `Content-Type: application/json`. Bounds: at most --queue requests are
answered or waiting at once (more get 429 with Retry-After), a request's headers and then its body
must each arrive within --read-timeout seconds (an idle connection is closed after it), bodies over
8 MiB get 413, and names, stop strings, logit biases, grammars and schemas have caps (400 naming
the field).
With --models-dir a request may name any .gguf file of that folder (its name without .gguf;
GET /v1/models lists them): it is loaded when asked for, once the replies of the model before it
have ended. Up to four requests are decoded together.

bench compares TTFT per turn with llama.cpp's own server when one is found (--server PATH, else
the build of scripts/build-llama-server.sh); --no-server skips it. It also times four clients at
once on Hearth's server against one at a time and against llama-server --parallel 4.
Its sections (speed, conversation, switch, switch-server, typing, parallel, decoding, busy-core, tools)
each report their figures or what failed (which server, which request, the server's last lines):
one failure costs only that section, and the exit status says whether any failed.
--sections speed,typing runs only those. --compare FILE checks this run's ratios against the
figures recorded in FILE (docs/benchmarks.json; `make bench-check`) and fails on any that moved
the wrong way by more than the noise the file states; --record FILE writes this run's figures there.
--flash-attn auto|on|off and --kv-type f16|q8_0|q4_0 load the engine's model so (default: the app's).
bench-cut-back counts what a 20-turn chat reads again when regenerated, edited (last message, three
turns back) and switched back to, and what it takes parked in RAM (sliding-window, hybrid models).

Load flags: --ctx N (default: min(trained length, 32768, what a quarter of free RAM holds))
  --threads N (default: physical cores)  --batch 512  --ubatch 512  --gpu-layers N (0 = none;
  default: all that fit)  --flash-attn auto|on|off  --kv-type f16|q8_0|q4_0  --no-mmap  --mlock
  --chat-template FILE (a Jinja template instead of the model's own)
  --mmproj FILE (the image projector; default: mmproj*.gguf beside the model)
  --image-min-tokens N  --image-max-tokens N (the tokens an image becomes; default: the projector's)

--preset Precise|Balanced|Creative starts from a built-in preset (later flags adjust it).
Sampling flags name any field of Hearth's sampling settings in kebab case, e.g.
  --temperature 0.7 (or --temp)  --top-k 40  --top-p 0.95  --min-p 0.05  --typical-p 1
  --top-n-sigma 0  --xtc-probability 0  --xtc-threshold 0.1  --dynatemp-range 0
  --dynatemp-exponent 1  --dry-multiplier 0  --dry-base 1.75  --dry-allowed-length 2
  --dry-last-n -1  --dry-sequence-breakers '\\n' (repeatable)  --mirostat off|v1|v2
  --mirostat-tau 5  --mirostat-eta 0.1  --repeat-penalty 1  --repeat-last-n 64
  --presence-penalty 0  --frequency-penalty 0  --seed N  --max-tokens 1024  --ignore-eos
  --stop TEXT (repeatable)  --logit-bias TOKEN_ID=BIAS or TEXT=BIAS (repeatable; -100 bans)
  --grammar GBNF  --json-schema SCHEMA  --sampler-order penalties,dry,topNSigma,topK,typicalP,topP,minP,xtc,temperature
  --lookup (speculative decoding by prompt lookup; same reply, faster when it copies text)  --draft-max 8
  --draft FILE (speculative decoding with a draft model: a small GGUF of the same vocabulary
  writes ahead, the model checks; same reply)
  --mbr N (consensus: N replies sampled side by side, the one closest to the others kept;
  --strategy consensus --mbr-candidates N)  --mbr-utility chrF|exactMatch
  --beam W (beam search: the likeliest reply, W partial replies at a time; --strategy beam
  --beam-width W)  --length-penalty 1  --early-stopping true|false  --n-best N (≤ W)
  --top-probs N (each token with the distribution it was drawn from and its N likeliest
  tokens, as one JSON line on stderr after the reply; the app keeps 5 for its inspector)

When stdin is not a terminal, each input line is one user turn; replies go to stdout, each
turn's stats line to stderr. --db FILE saves the conversation as a new chat in that Hearth history
database (--chat ID carries on a chat saved there), streamed to disk as in the app (quit Hearth before pointing it at the app's own file:
opening a history marks replies still streaming as interrupted). --fresh makes each line a new
conversation with the model still loaded, as New chat does in the app (make bench-app uses it).";

fn main() -> ExitCode {
    // The CLI's engine runs in a child process of this same binary.
    hearth_engine::host::serve_if_asked();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();

    let argv: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let result = match argv.first().map(String::as_str) {
        Some("chat") => args::ChatArgs::parse(&argv[1..]).and_then(|a| runtime.block_on(chat::run(a))),
        Some("models") => runtime.block_on(models::run(&argv[1..])),
        Some("devices") => runtime.block_on(devices::run(&argv[1..])),
        Some("serve") => args::ServeArgs::parse(&argv[1..]).and_then(|a| runtime.block_on(serve::run(a))),
        Some("bench") => args::BenchArgs::parse(&argv[1..]).and_then(|a| runtime.block_on(bench::run(a))),
        Some("bench-cut-back") => args::BenchArgs::parse(&argv[1..]).and_then(|a| runtime.block_on(cut_back::run(a))),
        // Internal: the raw baseline, run by `bench` in a process of its own.
        Some("bench-raw") => args::BenchArgs::parse(&argv[1..]).and_then(bench::run_raw),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("expected a command\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
