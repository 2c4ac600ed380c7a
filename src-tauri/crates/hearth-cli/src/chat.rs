//! `hearth-cli chat`: a conversation on stdin/stdout, with a local model (keeping the KV cache
//! across turns) or a remote provider (`--provider`). With `--db PATH` it is saved as a Hearth
//! chat through the app's own turn logic (flushed as it streams, so a killed process leaves an
//! interrupted reply, never a lost one).

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_app::Settings;
use hearth_core::{
    CacheBudgets, CancelFlag, ChatBackend, ChatId, ChatMessage, ChatService, GenEvent, LoadParams, ModelTarget, ProviderConfig,
    ProviderKind, ReplyRequest, ReplyStats, Role, SamplingParams, SettingsScope, Switch, TokenProbs, TurnEvent,
};
use hearth_engine::{Engine, HostProgram};
use hearth_providers::{FixedKeys, HubOptions, KeyError, KeySource, KeyStore, Providers, Timeouts};
use hearth_store::Store;

use crate::args::{ChatArgs, RemoteArgs};

type Backend = Switch<Engine, Providers>;

pub async fn run(args: ChatArgs) -> Result<(), String> {
    // With a history, chats' KV caches are kept beside it, as the app keeps them in its data dir.
    let engine = match args.db.as_deref().and_then(Path::parent) {
        Some(dir) => Engine::spawn_with(HostProgram::from_env().with_kv_dir(dir.join(hearth_app::KV_CACHE_DIR))),
        None => Engine::spawn(),
    };
    if let Some(db) = &args.db {
        engine.set_cache_budgets(saved_cache_budgets(db).await?);
    }
    let providers = Providers::new(Arc::new(cli_keys(args.remote.as_ref())), Timeouts::default(), &HubOptions::default());
    let (target, banner) = match &args.remote {
        None => {
            let load = match &args.db {
                // As the app loads it: with the settings saved for it.
                Some(db) if !args.load_given => saved_load_params(db, &args.model).await?,
                _ => args.load.clone(),
            };
            let info = engine.load(Path::new(&args.model), load).await.map_err(|e| e.to_string())?;
            (ModelTarget::LOADED, format!("{} loaded", info.name))
        }
        Some(remote) => {
            let config = remote_config(remote);
            let banner = format!("{} at {} ({})", args.model, config.base_url, config.name);
            let target = ModelTarget::Remote { provider: config.id.clone(), model: args.model.clone() };
            providers.set_configs(vec![config]);
            (target, banner)
        }
    };
    let backend = Arc::new(Switch::new(Arc::new(engine), Arc::new(providers)));
    let mut conversation = match &args.db {
        Some(path) => Conversation::saved(backend.clone(), path, args.chat, args.system.as_deref(), &target).await?,
        None => Conversation::in_memory(backend.clone(), args.system.clone(), target.clone()),
    };
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        eprintln!("{banner}. Type a message; Ctrl-D ends.");
    }
    let mut lines = std::io::stdin().lock().lines();
    let mut failed = 0;
    loop {
        if interactive {
            eprint!("> ");
        }
        let Some(line) = lines.next() else { break };
        let line = line.map_err(|e| format!("cannot read stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        if args.fresh {
            conversation = Conversation::in_memory(backend.clone(), args.system.clone(), target.clone());
        }
        let stats = match conversation.reply(line, &args).await {
            Ok(stats) => stats,
            Err(e) => {
                // One failed reply (even an engine crash: a new engine has the model again)
                // does not end the conversation; the exit status says it happened.
                println!();
                eprintln!("error: {e}");
                failed += 1;
                continue;
            }
        };
        let mut stdout = std::io::stdout();
        writeln!(stdout).and_then(|_| stdout.flush()).map_err(|e| e.to_string())?;
        for line in alternatives(&stats) {
            eprintln!("{line}");
        }
        // On stderr, so scripts reading the reply text never see it; it also marks a turn's end.
        eprintln!(
            "[{} prompt tokens, {} cached, {} generated, {:.1} tok/s, TTFT {:.0} ms{}]",
            stats.prompt_tokens,
            stats.cached_tokens,
            stats.completion_tokens,
            stats.decode_tps,
            stats.ttft_ms,
            drafts(&stats)
        );
    }
    match failed {
        0 => Ok(()),
        n => Err(format!("{n} {} failed", if n == 1 { "reply" } else { "replies" })),
    }
}

/// The provider `--provider` names. Its id is the kind's name, the id the app gives its
/// built-in OpenAI and Anthropic entries, so a key saved in the app is found here.
fn remote_config(remote: &RemoteArgs) -> ProviderConfig {
    let (id, name) = match remote.kind {
        ProviderKind::OpenAi => ("openai", "OpenAI"),
        ProviderKind::Anthropic => ("anthropic", "Anthropic"),
        ProviderKind::OpenAiCompatible => ("openai-compatible", "OpenAI-compatible server"),
    };
    let mut config = ProviderConfig::new(id, name, remote.kind);
    if let Some(url) = &remote.base_url {
        config.base_url = url.clone();
    }
    config.extensions = remote.kind.takes_extensions();
    config
}

/// The key from the kind's environment variable (or `HEARTH_API_KEY`), else the keychain.
fn cli_keys(remote: Option<&RemoteArgs>) -> CliKeys {
    let from_env = remote
        .and_then(|r| [r.kind.key_env_var(), "HEARTH_API_KEY"].iter().find_map(|var| std::env::var(var).ok().filter(|k| !k.is_empty())));
    let data_dir = std::env::var_os("HEARTH_DATA_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let base = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/share"));
        base.join("dev.hearth.desktop")
    });
    let env = FixedKeys(remote.zip(from_env).map(|(r, key)| (remote_config(r).id, key)).into_iter().collect::<BTreeMap<_, _>>());
    CliKeys { env, keychain: KeyStore::new(data_dir.join("keys.json")) }
}

struct CliKeys {
    env: FixedKeys,
    keychain: KeyStore,
}

impl KeySource for CliKeys {
    fn key(&self, provider: &str) -> Result<Option<String>, KeyError> {
        match self.env.key(provider)? {
            Some(key) => Ok(Some(key)),
            None => self.keychain.key(provider),
        }
    }
}

enum Conversation {
    /// History kept in this process only.
    InMemory { backend: Arc<Backend>, history: Vec<ChatMessage>, target: ModelTarget },
    /// A chat in a Hearth history database, answered with its settings as the app resolves them.
    Saved { service: ChatService<Backend, Store>, settings: Settings, chat: ChatId },
}

impl Conversation {
    fn in_memory(backend: Arc<Backend>, system: Option<String>, target: ModelTarget) -> Self {
        let history = system.into_iter().map(|s| ChatMessage::new(Role::System, s)).collect();
        Conversation::InMemory { backend, history, target }
    }

    async fn saved(
        backend: Arc<Backend>,
        db: &Path,
        chat: Option<ChatId>,
        system: Option<&str>,
        target: &ModelTarget,
    ) -> Result<Self, String> {
        let store = Store::open(db).await.map_err(|e| e.to_string())?;
        let chat = match chat {
            Some(id) => store.chat(id).await,
            None => store.create_chat().await,
        };
        let chat = chat.map_err(|e| e.to_string())?.id;
        if let Some(prompt) = system {
            store.set_system_prompt(chat, prompt).await.map_err(|e| e.to_string())?;
        }
        store.set_chat_target(chat, target).await.map_err(|e| e.to_string())?;
        let settings = Settings::new(store.clone());
        Ok(Conversation::Saved { service: ChatService::new(backend, Arc::new(store)), settings, chat })
    }

    /// Streams the reply to `line` to stdout and returns its stats.
    async fn reply(&mut self, line: String, args: &ChatArgs) -> Result<ReplyStats, String> {
        match self {
            Conversation::InMemory { backend, history, target } => {
                history.push(ChatMessage::new(Role::User, line));
                let top_probs = args.sampling_flags.gives("topProbs").then_some(args.sampling.top_probs);
                let (reply, stats, tokens) = stream_reply(backend, history, &args.sampling, target, top_probs).await.inspect_err(|_| {
                    history.pop(); // Unanswered: the next line is asked without it.
                })?;
                history.push(ChatMessage::new(Role::Assistant, reply));
                if top_probs.is_some() {
                    // After the reply's line: each token with the distribution it was drawn from.
                    eprintln!("{}", serde_json::json!({ "tokens": tokens }));
                }
                Ok(stats)
            }
            Conversation::Saved { service, settings, chat } => {
                // The chat's settings, else its model's, else the global ones; flags adjust them.
                let model = service.backend().local.loaded().map(|m| m.path);
                let resolved = settings.sampling(&SettingsScope::Chat { id: *chat }, model.as_deref()).await.map_err(|e| e.to_string())?;
                let sampling = args.sampling_flags.over(&resolved.params)?;
                let print = |event: TurnEvent| {
                    if let TurnEvent::Delta(text) = event {
                        print_delta(&text);
                    }
                };
                let reply = service.send(*chat, &line, sampling, print).await.map_err(|e| e.to_string())?;
                Ok(reply.stats.unwrap_or_default())
            }
        }
    }
}

/// The load settings the app saved for `model` in the history at `db`.
async fn saved_load_params(db: &Path, model: &str) -> Result<LoadParams, String> {
    saved_settings(db).await?.load_params(model).await.map_err(|e| e.to_string())
}

/// The budgets for chats' caches saved in the history, which the app puts in force too.
async fn saved_cache_budgets(db: &Path) -> Result<CacheBudgets, String> {
    saved_settings(db).await?.cache_budgets().await.map_err(|e| e.to_string())
}

async fn saved_settings(db: &Path) -> Result<Settings, String> {
    Ok(Settings::new(Store::open(db).await.map_err(|e| e.to_string())?))
}

/// The replies a beam search or a consensus chose among, one line each (the reply is the first
/// beam, or the candidate marked chosen).
fn alternatives(stats: &ReplyStats) -> Vec<String> {
    // Debug-quoted, so a line break shows as \n.
    let shown = |text: &str| {
        if text.chars().count() > 80 { format!("{}…", text.chars().take(80).collect::<String>()) } else { text.to_owned() }
    };
    let beams = stats.beams.iter().flatten().enumerate().map(|(i, h)| {
        format!("  beam {}: score {:.3} (log-probability {:.2} over {} tokens) {:?}", i + 1, h.score, h.logprob, h.tokens, shown(&h.text))
    });
    let candidates = stats.consensus.iter().flat_map(|c| {
        c.candidates.iter().enumerate().map(move |(i, candidate)| {
            let chosen = if i == c.chosen as usize { " (chosen)" } else { "" };
            format!("  candidate {}{chosen}: score {:.3} {:?}", i + 1, candidate.score, shown(&candidate.text))
        })
    });
    beams.chain(candidates).collect()
}

/// Speculative decoding's share, when it ran.
fn drafts(stats: &ReplyStats) -> String {
    match stats.drafted_tokens {
        0 => String::new(),
        drafted => format!(", {} of {drafted} drafted tokens accepted", stats.accepted_tokens),
    }
}

/// Streams one reply to stdout and returns its text and stats.
async fn stream_reply(
    backend: &Backend,
    history: &[ChatMessage],
    sampling: &SamplingParams,
    target: &ModelTarget,
    top_probs: Option<u32>,
) -> Result<(String, ReplyStats, Vec<TokenProbs>), String> {
    let mut request = ReplyRequest::new(history.to_vec(), sampling.clone(), CancelFlag::new());
    request.target = target.clone();
    request.top_probs = top_probs;
    let mut tokens = Vec::new();
    let mut stream = backend.start_reply(request).map_err(|e| e.to_string())?;
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(delta) => {
                print_delta(&delta);
                text.push_str(&delta);
            }
            GenEvent::Finished { stats, .. } => return Ok((text, stats, tokens)),
            GenEvent::Failed(e) => return Err(e.to_string()),
            GenEvent::TokenProbs(more) => tokens.extend(more),
            // A search's reply is printed whole when it ends.
            GenEvent::Logprobs(_) | GenEvent::Searching { .. } => {}
        }
    }
    Err("the reply stopped unexpectedly".into())
}

/// Writes reply text as it arrives. A closed stdout is not fatal: with `--db` the reply is
/// still saved, and without it the next turn's newline reports the broken pipe.
fn print_delta(text: &str) {
    let mut stdout = std::io::stdout();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        tracing::warn!(error = %e, "cannot write the reply to stdout");
    }
}
