//! What a turn starts from, read from the store: the history before the reply, the user message
//! to add, or the unfinished reply to write on (continued, or branched at a token).

use super::{ChatService, HistoryStore, TurnError};
use crate::{Attachment, ChatBackend, ChatId, MessageId, MessageStatus, Role, StoredMessage, TokenProbs, ToolResult, Turn};

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
/// alternative `token` the inspector showed at `at`.
fn branch_at(original: &StoredMessage, mut tokens: Vec<TokenProbs>, at: usize, token: i32) -> Result<Branch, TurnError> {
    let refuse = |why: &str| Err(TurnError::InvalidInput(why.into()));
    let Some(position) = tokens.get(at) else {
        return refuse("this reply has no token probabilities kept at that position");
    };
    let Some(alternative) = position.top.iter().find(|t| t.id == token).cloned() else {
        return refuse("that token was not among the alternatives at this position");
    };
    // The tokens' texts spell the reply (a character split over tokens shows as U+FFFD in
    // each piece: the opening is then taken from the reply itself).
    let opening: String = tokens[..at].iter().map(|t| t.text.as_str()).collect();
    let text = match original.content.starts_with(&opening) {
        true => opening,
        false if !opening.contains('\u{FFFD}') => return refuse("the reply's text no longer matches its tokens"),
        false => return refuse("this position is inside a character written over several tokens; choose a neighbouring token"),
    };
    let chosen = TokenProbs { id: alternative.id, text: alternative.text.clone(), p: alternative.p, ..position.clone() };
    tokens.truncate(at);
    tokens.push(chosen);
    Ok(Branch { text: text + &alternative.text, model: original.model.clone(), tokens })
}
