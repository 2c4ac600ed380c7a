//! `hearth-cli chat`: a conversation on stdin/stdout that keeps the KV cache across turns. With
//! `--db PATH` it is saved as a Hearth chat through the app's own turn logic (flushed as it
//! streams, so a killed process leaves an interrupted reply, never a lost one).

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use hearth_core::{
    CancelFlag, ChatBackend, ChatId, ChatMessage, ChatService, GenEvent, ReplyRequest, ReplyStats, Role,
    SamplingParams, TurnEvent,
};
use hearth_engine::Engine;
use hearth_store::Store;

use crate::args::ChatArgs;

pub async fn run(args: ChatArgs) -> Result<(), String> {
    let engine = Engine::spawn();
    let info = engine.load(&args.model, args.load).await.map_err(|e| e.to_string())?;
    let mut conversation = match &args.db {
        Some(path) => Conversation::saved(engine, path, args.chat, args.system.as_deref()).await?,
        None => Conversation::in_memory(engine, args.system),
    };
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        eprintln!("{} loaded. Type a message; Ctrl-D ends.", info.name);
    }
    let mut lines = std::io::stdin().lock().lines();
    loop {
        if interactive {
            eprint!("> ");
        }
        let Some(line) = lines.next() else { break };
        let line = line.map_err(|e| format!("cannot read stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let stats = conversation.reply(line, &args.sampling).await?;
        let mut stdout = std::io::stdout();
        writeln!(stdout).and_then(|_| stdout.flush()).map_err(|e| e.to_string())?;
        // On stderr, so scripts reading the reply text never see it; it also marks a turn's end.
        eprintln!(
            "[{} prompt tokens, {} cached, {} generated, {:.1} tok/s, TTFT {:.0} ms]",
            stats.prompt_tokens, stats.cached_tokens, stats.completion_tokens, stats.decode_tps, stats.ttft_ms
        );
    }
    Ok(())
}

enum Conversation {
    /// History kept in this process only.
    InMemory { engine: Engine, history: Vec<ChatMessage> },
    /// A chat in a Hearth history database.
    Saved { service: ChatService<Engine, Store>, chat: ChatId },
}

impl Conversation {
    fn in_memory(engine: Engine, system: Option<String>) -> Self {
        let history = system.into_iter().map(|s| ChatMessage::new(Role::System, s)).collect();
        Conversation::InMemory { engine, history }
    }

    async fn saved(engine: Engine, db: &Path, chat: Option<ChatId>, system: Option<&str>) -> Result<Self, String> {
        let store = Store::open(db).await.map_err(|e| e.to_string())?;
        let chat = match chat {
            Some(id) => store.chat(id).await,
            None => store.create_chat().await,
        };
        let chat = chat.map_err(|e| e.to_string())?.id;
        if let Some(prompt) = system {
            store.set_system_prompt(chat, prompt).await.map_err(|e| e.to_string())?;
        }
        Ok(Conversation::Saved { service: ChatService::new(Arc::new(engine), Arc::new(store)), chat })
    }

    /// Streams the reply to `line` to stdout and returns its stats.
    async fn reply(&mut self, line: String, sampling: &SamplingParams) -> Result<ReplyStats, String> {
        match self {
            Conversation::InMemory { engine, history } => {
                history.push(ChatMessage::new(Role::User, line));
                let (reply, stats) = stream_reply(engine, history, sampling).await?;
                history.push(ChatMessage::new(Role::Assistant, reply));
                Ok(stats)
            }
            Conversation::Saved { service, chat } => {
                let print = |event: TurnEvent| {
                    if let TurnEvent::Delta(text) = event {
                        print_delta(&text);
                    }
                };
                let reply = service.send(*chat, &line, sampling.clone(), print).await.map_err(|e| e.to_string())?;
                Ok(reply.stats.unwrap_or_default())
            }
        }
    }
}

/// Streams one reply to stdout and returns its text and stats.
async fn stream_reply(
    engine: &Engine,
    history: &[ChatMessage],
    sampling: &SamplingParams,
) -> Result<(String, ReplyStats), String> {
    let request = ReplyRequest::new(history.to_vec(), sampling.clone(), CancelFlag::new());
    let mut stream = engine.start_reply(request).map_err(|e| e.to_string())?;
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(delta) => {
                print_delta(&delta);
                text.push_str(&delta);
            }
            GenEvent::Finished { stats, .. } => return Ok((text, stats)),
            GenEvent::Failed(e) => return Err(e.to_string()),
        }
    }
    Err("the engine stopped unexpectedly".into())
}

/// Writes reply text as it arrives. A closed stdout is not fatal: with `--db` the reply is
/// still saved, and without it the next turn's newline reports the broken pipe.
fn print_delta(text: &str) {
    let mut stdout = std::io::stdout();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        tracing::warn!(error = %e, "cannot write the reply to stdout");
    }
}
