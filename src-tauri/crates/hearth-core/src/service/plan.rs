//! What a turn starts from, read from the store: the history before the reply, the user message
//! to add, or the unfinished reply to write on (continued, or branched at a token).

use super::{ChatService, HistoryStore, TurnError};
use crate::{Attachment, ChatBackend, ChatId, MessageId, MessageStatus, Role, StoredMessage, TextReading, TokenProbs, ToolResult, Turn};

/// What a turn starts from: the history before the reply, a user message to add (after which
/// parent), or an unfinished reply to write on.
pub(super) struct Plan<'a> {
    pub history: Vec<StoredMessage>,
    pub user: Option<Question<'a>>,
    pub continued: Option<StoredMessage>,
    /// The tokens kept so far of the reply written on (a continued or branched one).
    pub tokens: Vec<TokenProbs>,
    /// A new version to create, holding an earlier one's opening and an alternative token.
    pub branch: Option<Branch>,
    /// Tool results to save after the history (which ends with the reply that called).
    pub results: &'a [ToolResult],
}

/// A user message to add: after `parent`, its text and files.
pub(super) struct Question<'a> {
    pub parent: Option<MessageId>,
    pub content: &'a str,
    pub attachments: Vec<Attachment>,
}

pub(super) struct Branch {
    pub text: String,
    pub model: Option<String>,
    pub tokens: Vec<TokenProbs>,
}

impl<B: ChatBackend, S: HistoryStore> ChatService<B, S> {
    pub(super) async fn plan<'a>(&self, chat: ChatId, turn: Turn<'a>) -> Result<Plan<'a>, TurnError> {
        let store = &*self.store;
        let boxed = |e: S::Error| TurnError::Store(Box::new(e));
        let history_before = async |message: &StoredMessage| match message.parent_id {
            Some(parent) => store.path_to(parent).await.map_err(boxed),
            None => Ok(Vec::new()),
        };
        let in_chat = async |id: MessageId, role: Role| {
            let message = store.message(id).await.map_err(boxed)?;
            if message.chat_id != chat || message.role != role {
                return Err(TurnError::InvalidInput(format!("message {id} is not a {} message of this chat", role.as_str())));
            }
            Ok(message)
        };
        Ok(match turn {
            Turn::Send { content, attachments } => {
                let history = store.messages(chat).await.map_err(boxed)?;
                let user = Question { parent: history.last().map(|m| m.id), content, attachments: attachments.to_vec() };
                Plan { history, user: Some(user), continued: None, tokens: Vec::new(), branch: None, results: &[] }
            }
            Turn::Edit { message, content } => {
                let original = in_chat(message, Role::User).await?;
                let history = history_before(&original).await?;
                let user = Question { parent: original.parent_id, content, attachments: original.attachments };
                Plan { history, user: Some(user), continued: None, tokens: Vec::new(), branch: None, results: &[] }
            }
            Turn::Regenerate { reply } => {
                let original = in_chat(reply, Role::Assistant).await?;
                Plan {
                    history: history_before(&original).await?,
                    user: None,
                    continued: None,
                    tokens: Vec::new(),
                    branch: None,
                    results: &[],
                }
            }
            Turn::Continue { reply } => {
                let partial = in_chat(reply, Role::Assistant).await?;
                if partial.status == MessageStatus::Streaming {
                    return Err(TurnError::InvalidInput("this reply is still being written".into()));
                }
                let tokens = store.token_probs(partial.id).await.map_err(boxed)?;
                Plan { history: history_before(&partial).await?, user: None, continued: Some(partial), tokens, branch: None, results: &[] }
            }
            Turn::ToolResults { reply, results } => {
                let caller = in_chat(reply, Role::Assistant).await?;
                if results.is_empty() {
                    return Err(TurnError::InvalidInput("tool results are needed to answer with".into()));
                }
                if caller.status == MessageStatus::Streaming {
                    return Err(TurnError::InvalidInput("this reply is still being written".into()));
                }
                let history = store.path_to(caller.id).await.map_err(boxed)?;
                Plan { history, user: None, continued: None, tokens: Vec::new(), branch: None, results }
            }
            Turn::Branch { reply, at, token } => {
                let original = in_chat(reply, Role::Assistant).await?;
                let tokens = store.token_probs(original.id).await.map_err(boxed)?;
                let branch = branch_at(&original, tokens, at, token)?;
                Plan {
                    history: history_before(&original).await?,
                    user: None,
                    continued: None,
                    tokens: Vec::new(),
                    branch: Some(branch),
                    results: &[],
                }
            }
        })
    }
}

/// The opening of a new version of `original`: its first `at` tokens' text, then the
/// alternative `token` the inspector showed at `at` — as the reply's text holds them (see
/// [`TextReading`]).
fn branch_at(original: &StoredMessage, mut tokens: Vec<TokenProbs>, at: usize, token: i32) -> Result<Branch, TurnError> {
    let refuse = |why: &str| Err(TurnError::InvalidInput(why.into()));
    let Some(position) = tokens.get(at) else {
        return refuse("this reply has no token probabilities kept at that position");
    };
    let Some(alternative) = position.top.iter().find(|t| t.id == token).cloned() else {
        return refuse("that token was not among the alternatives at this position");
    };
    let content = &original.content;
    // The reading under which the reply's text follows its tokens the furthest.
    // (Reversed: of readings that reach as far, the first.)
    let (reading, reached) = TextReading::ALL
        .iter()
        .rev()
        .map(|&kind| (kind, reach(kind, content, &tokens)))
        .max_by_key(|&(_, reached)| reached)
        .unwrap_or((TextReading::Raw, 0));
    if reached < at {
        // A character split over tokens shows as U+FFFD in each piece.
        let split = tokens[reached..=at.min(tokens.len() - 1)].iter().any(|t| t.text.contains('\u{FFFD}'));
        return match split {
            true => refuse("this position is inside a character written over several tokens; choose a neighbouring token"),
            false => refuse("the reply's text no longer matches its tokens"),
        };
    }
    let mut read = reading.reader();
    let mut text = read.opening();
    for t in &tokens[..at] {
        text.push_str(&read.push(&t.text));
    }
    text.push_str(&read.push(&alternative.text));
    if !read.is_settled() {
        return refuse(
            "this position is inside a marker of the model's format (its channels or a tool call), not its text; choose a token in the text",
        );
    }
    let chosen = TokenProbs { id: alternative.id, text: alternative.text.clone(), p: alternative.p, ..position.clone() };
    tokens.truncate(at);
    tokens.push(chosen);
    Ok(Branch { text, model: original.model.clone(), tokens })
}

/// How many of `tokens` `reading` finds in `content`: its text from them stays the start of
/// `content`.
fn reach(reading: TextReading, content: &str, tokens: &[TokenProbs]) -> usize {
    let mut read = reading.reader();
    let mut text = read.opening();
    if !content.starts_with(&text) {
        return 0;
    }
    for (i, token) in tokens.iter().enumerate() {
        text.push_str(&read.push(&token.text));
        if !content.starts_with(&text) {
            return i;
        }
    }
    tokens.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TokenAlternative;

    fn tokens(texts: &[&str]) -> Vec<TokenProbs> {
        let alternatives =
            vec![TokenAlternative { id: 99, text: " X".into(), p: 0.1 }, TokenAlternative { id: 98, text: "<|end|>".into(), p: 0.1 }];
        let token =
            |(i, text): (usize, &&str)| TokenProbs { id: i as i32, text: (*text).into(), p: 0.5, entropy: 1.0, top: alternatives.clone() };
        texts.iter().enumerate().map(token).collect()
    }

    /// A branch opens with the reply's own text up to the position, then the alternative — in
    /// the form the reply's text was stored in; where it cannot, it is refused in words.
    #[test]
    fn a_branch_opens_as_the_reply_is_stored() {
        // The reply's text, its tokens' texts, the position, and the branch's text or the words.
        type Case<'a> = (&'a str, &'a [&'a str], usize, Result<&'a str, &'a str>);
        let cases: &[Case] = &[
            // Text as the tokens wrote it.
            ("Hello there friend", &["Hello", " there", " friend"], 2, Ok("Hello there X")),
            ("Hello there friend", &["Hello", " there", " friend"], 0, Ok(" X")),
            // A stop string cut from the text, its tokens kept.
            ("Hello there", &["Hello", " there", " STOP"], 1, Ok("Hello X")),
            // A reasoning block the prompt opened (DeepSeek-R1's template).
            ("<think>\nHmm.\n</think>\n\nFour.", &["Hmm", ".\n", "</think>", "\n\n", "Four", "."], 4, Ok("<think>\nHmm.\n</think>\n\n X")),
            // gpt-oss's channels: read as the reply's text; the prompt may open the analysis.
            (
                "<think>Sum.</think>Four.",
                &[
                    "<|channel|>",
                    "analysis",
                    "<|message|>",
                    "Sum",
                    ".",
                    "<|end|>",
                    "<|start|>",
                    "assistant",
                    "<|channel|>",
                    "final",
                    "<|message|>",
                    "Four",
                    ".",
                ],
                4,
                Ok("<think>Sum X"),
            ),
            (
                "<think>Sum.</think>Four.",
                &["Sum", ".", "<|end|>", "<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "Four", "."],
                1,
                Ok("<think>Sum X"),
            ),
            (
                "<think>Sum.</think>Four.",
                &["<|channel|>", "analysis", "<|message|>", "Sum", ".", "<|end|>", "<|start|>", "assistant", "<|channel|>", "final"],
                1,
                Err("inside a marker"),
            ),
            // Edited since, or a character over several tokens.
            ("Goodbye", &["Hello", " there"], 1, Err("no longer matches")),
            ("Caf\u{e9} ok", &["Caf", "\u{FFFD}", "\u{FFFD}", " ok"], 2, Err("inside a character")),
        ];
        for (content, texts, at, expected) in cases {
            let original = StoredMessage {
                id: 2,
                chat_id: 1,
                role: Role::Assistant,
                content: (*content).into(),
                status: MessageStatus::Complete,
                created_at: 0,
                model: None,
                stats: None,
                parent_id: Some(1),
                siblings: vec![2],
                tool: None,
                tool_calls: Vec::new(),
                attachments: Vec::new(),
                passages: Vec::new(),
            };
            let got = branch_at(&original, tokens(texts), *at, 99).map(|b| b.text).map_err(|e| e.to_string());
            match expected {
                Ok(text) => assert_eq!(got.as_deref(), Ok(*text), "{content:?} at {at}"),
                Err(words) => assert!(got.as_ref().is_err_and(|e| e.contains(words)), "{content:?} at {at}: {got:?}"),
            }
        }
    }
}
