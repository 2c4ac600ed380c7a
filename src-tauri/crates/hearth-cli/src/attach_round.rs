//! `hearth-cli bench`, section `attach`: a question about an attached document, and the next one.
//! The document (about 1,500 tokens of prose, a real file read by `hearth_attach`) goes in whole
//! before the first question, as a chat sends it; the second question should read none of it again
//! (the chat's KV cache). Measured: the second question's time to its first token, against the
//! same in a chat without a document (`attach_ttft_ratio`; 1.0 is the floor).

use serde::Serialize;

use hearth_attach::Limits;
use hearth_core::{ChatMessage, DocumentTexts, ReplyStats, Role, with_documents};
use hearth_engine::{Engine, LoadParams};

use crate::args::BenchArgs;
use crate::bench_kit::turn_in;

/// Rounds of each kind; the figures are their medians.
const ROUNDS: i64 = 3;
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
}

pub async fn run(args: &BenchArgs, load: LoadParams) -> Result<AttachReport, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary folder: {e}"))?;
    let engine = Engine::spawn();
    engine.load(&args.model, load).await.map_err(|e| format!("the model did not load: {e}"))?;
    // The first decode after a load pays one-off costs no later turn pays.
    turn_in(&engine, &[ChatMessage::new(Role::User, "Hello!")], 4, None).await?;
    let (mut plain, mut attached) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Each round's own file and question: no round borrows another's cached opening.
        let path = dir.path().join(format!("bread-{round}.md"));
        std::fs::write(&path, document()).map_err(|e| format!("the document could not be written: {e}"))?;
        let file = hearth_attach::read_file(&path, &Limits::default()).map_err(|e| e.to_string())?;
        let texts = DocumentTexts::from([(file.attachment.hash.clone(), file.text)]);
        let question = format!("Question {round}: {FIRST_QUESTION}");
        let with_document = with_documents(&question, std::slice::from_ref(&file.attachment), &texts);
        let conversation = FIRST_CONVERSATION + 2 * round;
        plain.push(exchange(&engine, &question, conversation).await?);
        attached.push(exchange(&engine, &with_document, conversation + 1).await?);
    }
    engine.shutdown();
    let median = |turns: &[(ReplyStats, ReplyStats)], figure: &dyn Fn(&(ReplyStats, ReplyStats)) -> f64| {
        let mut values: Vec<f64> = turns.iter().map(figure).collect();
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let second_ttft = |t: &(ReplyStats, ReplyStats)| t.1.ttft_ms;
    let round = |v: f64, places: i32| (v * 10f64.powi(places)).round() / 10f64.powi(places);
    let (with, without) = (median(&attached, &second_ttft), median(&plain, &second_ttft));
    Ok(AttachReport {
        attach_ttft_ratio: round(with / without, 3),
        attach_second_ttft_ms: round(with, 1),
        attach_first_ttft_ms: round(median(&attached, &|t| t.0.ttft_ms), 1),
        attach_document_tokens: attached[0].0.prompt_tokens.saturating_sub(plain[0].0.prompt_tokens),
        attach_second_read_tokens: median(&attached, &|t| f64::from(t.1.prompt_tokens.saturating_sub(t.1.cached_tokens))) as u32,
    })
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
