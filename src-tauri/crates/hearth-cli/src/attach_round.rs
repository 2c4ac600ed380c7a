//! `hearth-cli bench`, section `attach`: a question about an attached document, and the next one.
//! The document (about 1,500 tokens of prose, a real file read by `hearth_attach`) goes in whole
//! before the first question, as a chat sends it; the second question should read none of it again
//! (the chat's KV cache). Measured: the second question's time to its first token, against the
//! same in a chat without a document (`attach_ttft_ratio`; 1.0 is the floor). Beside it, with a
//! llama-server built, the same exchanges on llama.cpp's own server with its prompt cache: the
//! reference (attention over the cached document costs it too).

use std::path::Path;

use serde::Serialize;

use hearth_attach::Limits;
use hearth_core::{ChatMessage, DocumentTexts, ReplyStats, Role, with_documents};
use hearth_engine::{Engine, LoadParams};

use crate::args::BenchArgs;
use crate::bench_kit::{N_BATCH, N_CTX, middle, rounded, turn_in};
use crate::peer::{LlamaServer, PeerError};

/// Rounds of each kind; the figures are their medians (five: three let one slow turn move them).
const ROUNDS: i64 = 5;
/// Conversation ids of the section's own (apart from the other sections').
const FIRST_CONVERSATION: i64 = 80_000;
const FIRST_QUESTION: &str = "What is this document about?";
const SECOND_QUESTION: &str = "Which century does it mention first?";

#[derive(Serialize)]
pub struct AttachReport {
    /// The second question's TTFT in a chat with the document ÷ in one without (median rounds).
    pub attach_ttft_ratio: f64,
    /// The second question's TTFT with the document, in ms.
    pub attach_second_ttft_ms: f64,
    /// The first question's TTFT with the document (it reads the document), in ms.
    pub attach_first_ttft_ms: f64,
    /// The document's tokens (the first question's prompt with it, less without it).
    pub attach_document_tokens: u32,
    /// The tokens the second question read with the document (its own turn: not the document).
    pub attach_second_read_tokens: u32,
    /// The same ratio on llama-server (with its prompt cache), and its second TTFT with the
    /// document, in ms.
    pub server_attach_ttft_ratio: Option<f64>,
    pub server_attach_second_ttft_ms: Option<f64>,
}

/// The section; with `server` (a llama-server binary), its exchanges too. A server that fails is
/// given back beside the engine's figures.
pub async fn run(args: &BenchArgs, load: LoadParams, server: Option<&Path>) -> Result<(AttachReport, Option<PeerError>), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let questions = questions(dir.path())?;
    let mut report = engine_exchanges(args, load, &questions).await?;
    let Some(binary) = server else { return Ok((report, None)) };
    match server_exchanges(args, binary, &questions).await {
        Ok((with, without)) => {
            report.server_attach_ttft_ratio = Some(rounded(with / without, 3));
            report.server_attach_second_ttft_ms = Some(rounded(with, 1));
            Ok((report, None))
        }
        Err(lost) => Ok((report, Some(lost))),
    }
}

/// Each round's first question alone and with its document (a file of its own, read by
/// `hearth_attach` and put before the question as a chat sends it): no round borrows another's
/// cached opening.
fn questions(dir: &Path) -> Result<Vec<(String, String)>, String> {
    (0..ROUNDS)
        .map(|round| {
            let path = dir.join(format!("bread-{round}.md"));
            std::fs::write(&path, document()).map_err(|e| format!("the document could not be written: {e}"))?;
            let file = hearth_attach::read_file(&path, &Limits::default()).map_err(|e| e.to_string())?;
            let texts = DocumentTexts::from([(file.attachment.hash.clone(), file.text)]);
            let question = format!("Question {round}: {FIRST_QUESTION}");
            let with_document = with_documents(&question, std::slice::from_ref(&file.attachment), &texts);
            Ok((question, with_document))
        })
        .collect()
}

async fn engine_exchanges(args: &BenchArgs, load: LoadParams, questions: &[(String, String)]) -> Result<AttachReport, String> {
    let engine = Engine::spawn();
    engine.load(&args.model, load).await.map_err(|e| format!("the model did not load: {e}"))?;
    // The first decode after a load pays one-off costs no later turn pays.
    turn_in(&engine, &[ChatMessage::new(Role::User, "Hello!")], 4, None).await?;
    let (mut plain, mut attached) = (Vec::new(), Vec::new());
    for (round, (question, with_document)) in questions.iter().enumerate() {
        let conversation = FIRST_CONVERSATION + 2 * round as i64;
        plain.push(exchange(&engine, question, conversation).await?);
        attached.push(exchange(&engine, with_document, conversation + 1).await?);
    }
    engine.shutdown();
    let median = |turns: &[(ReplyStats, ReplyStats)], figure: &dyn Fn(&(ReplyStats, ReplyStats)) -> f64| {
        middle(&turns.iter().map(figure).collect::<Vec<_>>())
    };
    let second_ttft = |t: &(ReplyStats, ReplyStats)| t.1.ttft_ms;
    let (with, without) = (median(&attached, &second_ttft), median(&plain, &second_ttft));
    Ok(AttachReport {
        attach_ttft_ratio: rounded(with / without, 3),
        attach_second_ttft_ms: rounded(with, 1),
        attach_first_ttft_ms: rounded(median(&attached, &|t| t.0.ttft_ms), 1),
        attach_document_tokens: attached[0].0.prompt_tokens.saturating_sub(plain[0].0.prompt_tokens),
        attach_second_read_tokens: median(&attached, &|t| f64::from(t.1.prompt_tokens.saturating_sub(t.1.cached_tokens))) as u32,
        server_attach_ttft_ratio: None,
        server_attach_second_ttft_ms: None,
    })
}

/// The same exchanges on llama-server (one slot: each exchange alone in its cache): the second
/// question's TTFT with the document and without, medians, in ms.
async fn server_exchanges(args: &BenchArgs, binary: &Path, questions: &[(String, String)]) -> Result<(f64, f64), PeerError> {
    let server = LlamaServer::start(binary, &args.model, args.threads, N_CTX, N_BATCH, &[]).await?;
    server.reply(&[("user", "Hello!")], 4, true).await?;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for (question, with_document) in questions {
        for (first, ttft) in [(question, &mut without), (with_document, &mut with)] {
            let answer = server.reply(&[("user", first)], 16, true).await?.text;
            let turns = [("user", first.as_str()), ("assistant", answer.as_str()), ("user", SECOND_QUESTION)];
            ttft.push(server.reply(&turns, 4, true).await?.ttft_ms);
        }
    }
    Ok((middle(&with), middle(&without)))
}

/// The first question (as `first`, the document before it or not) and the second, in one
/// conversation: their stats.
async fn exchange(engine: &Engine, first: &str, conversation: i64) -> Result<(ReplyStats, ReplyStats), String> {
    let mut history = vec![ChatMessage::new(Role::User, first)];
    let (text, one) = turn_in(engine, &history, 16, Some(conversation)).await?;
    history.push(ChatMessage::new(Role::Assistant, text));
    history.push(ChatMessage::new(Role::User, SECOND_QUESTION));
    let (_, two) = turn_in(engine, &history, 4, Some(conversation)).await?;
    // Each exchange alone in the KV cache: attention spans the cache's used cells, other
    // conversations' too, and the comparison is of one chat with and without its document.
    engine.forget(conversation);
    Ok((one, two))
}

/// About 1,500 tokens of Markdown prose, each paragraph its own.
fn document() -> String {
    let mut text = String::from("# A short history of bread\n\n");
    for (i, century) in ["ninth", "twelfth", "fifteenth", "seventeenth", "nineteenth", "twentieth"].iter().enumerate() {
        text += &format!(
            "## Part {n}\n\nIn the {century} century bakers in the valley kept a piece of yesterday's dough to raise \
             today's loaf. Grain stored through winter let villages grow, and the oven became the warm centre of the \
             house. Millers ground wheat, rye and barley between stones turned by water, and every household knew the \
             smell of the first loaf of the morning. Markets were held on the square each {day}, where flour was sold by \
             the sack and bread by the pound, and the price of a loaf was set by the town council after each harvest. \
             Apprentices learned to read the dough with their hands long before anyone knew that yeast was alive.\n\n",
            n = i + 1,
            day = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"][i],
        );
    }
    text
}
