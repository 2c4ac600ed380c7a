//! `hearth-cli chat`: a conversation on stdin/stdout that keeps the KV cache across turns.

use std::io::{BufRead, IsTerminal, Write};

use hearth_core::{CancelFlag, ChatBackend, ChatMessage, GenEvent, ReplyRequest, ReplyStats, Role};
use hearth_engine::Engine;

use crate::args::ChatArgs;

pub async fn run(args: ChatArgs) -> Result<(), String> {
    let engine = Engine::spawn();
    let info = engine.load(&args.model, args.load).await.map_err(|e| e.to_string())?;
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        eprintln!("{} loaded. Type a message; Ctrl-D ends.", info.name);
    }
    let mut history: Vec<ChatMessage> = args.system.into_iter().map(|s| ChatMessage::new(Role::System, s)).collect();
    let mut stdout = std::io::stdout().lock();
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
        history.push(ChatMessage::new(Role::User, line));
        let (reply, stats) = reply(&engine, &history, &args.sampling, &mut stdout).await?;
        writeln!(stdout).and_then(|_| stdout.flush()).map_err(|e| e.to_string())?;
        if interactive {
            eprintln!(
                "[{} prompt tokens, {} cached, {} generated, {:.1} tok/s, TTFT {:.0} ms]",
                stats.prompt_tokens, stats.cached_tokens, stats.completion_tokens, stats.decode_tps, stats.ttft_ms
            );
        }
        history.push(ChatMessage::new(Role::Assistant, reply));
    }
    Ok(())
}

/// Streams one reply to `out` and returns its text and stats.
async fn reply(
    engine: &Engine,
    history: &[ChatMessage],
    sampling: &hearth_core::SamplingParams,
    out: &mut impl Write,
) -> Result<(String, ReplyStats), String> {
    let request = ReplyRequest::new(history.to_vec(), sampling.clone(), CancelFlag::new());
    let mut stream = engine.start_reply(request).map_err(|e| e.to_string())?;
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Delta(delta) => {
                out.write_all(delta.as_bytes()).and_then(|_| out.flush()).map_err(|e| e.to_string())?;
                text.push_str(&delta);
            }
            GenEvent::Finished { stats, .. } => return Ok((text, stats)),
            GenEvent::Failed(e) => return Err(e.to_string()),
        }
    }
    Err("the engine stopped unexpectedly".into())
}
