//! The store a chat's turns are kept in, as `ChatService` needs it.

use std::error::Error as StdError;
use std::future::Future;

use crate::{
    Attachment, ChatId, DocumentTexts, ImageInput, Meaning, MessageId, MessageStatus, ModelTarget, Passage, PassageMeaning, ReplyStats,
    Role, StoredMessage, TokenProbs, ToolRun,
};

/// Where chats are kept. Implemented by hearth-store over SQLite.
pub trait HistoryStore: Send + Sync + 'static {
    type Error: StdError + Send + Sync + 'static;

    /// The chat's path on show (what the model sees), oldest first. Fails if the chat does not exist.
    fn messages(&self, chat: ChatId) -> impl Future<Output = Result<Vec<StoredMessage>, Self::Error>> + Send;

    fn message(&self, id: MessageId) -> impl Future<Output = Result<StoredMessage, Self::Error>> + Send;

    /// The messages from the chat's first down to `id`, oldest first.
    fn path_to(&self, id: MessageId) -> impl Future<Output = Result<Vec<StoredMessage>, Self::Error>> + Send;

    /// The chat's system prompt ("" for none).
    fn system_prompt(&self, chat: ChatId) -> impl Future<Output = Result<String, Self::Error>> + Send;

    /// The model the chat's next reply comes from.
    fn chat_target(&self, chat: ChatId) -> impl Future<Output = Result<ModelTarget, Self::Error>> + Send;

    /// Adds a message after `parent` (`None`: first in the chat) and puts it on the path on show.
    fn append_message(
        &self,
        chat: ChatId,
        parent: Option<MessageId>,
        role: Role,
        content: &str,
        status: MessageStatus,
        model: Option<&str>,
    ) -> impl Future<Output = Result<StoredMessage, Self::Error>> + Send;

    /// Adds a user message carrying `attachments` (stored before, by hash) and the `passages` of
    /// them it was given after `parent`, and puts it on the path on show.
    fn append_question(
        &self,
        chat: ChatId,
        parent: Option<MessageId>,
        content: &str,
        attachments: &[Attachment],
        passages: &[Passage],
    ) -> impl Future<Output = Result<StoredMessage, Self::Error>> + Send;

    /// The best `limit` passages for `query` among the stored documents `hashes`, best first
    /// (their names left empty): by its words, and by its `meaning` too when given (the two
    /// rankings fused, passages without a vector of that model ranked by words alone); when
    /// fewer match and `fill`, the documents' first passages fill the rest.
    fn passages(
        &self,
        hashes: &[&str],
        query: &str,
        meaning: Option<&Meaning>,
        limit: usize,
        fill: bool,
    ) -> impl Future<Output = Result<Vec<Passage>, Self::Error>> + Send;

    /// Up to `limit` passages of the documents `hashes` without a vector of the embedding model
    /// `model` (names left empty), and how many such passages there are in all.
    fn passages_without_meaning(
        &self,
        hashes: &[&str],
        model: &str,
        limit: usize,
    ) -> impl Future<Output = Result<(Vec<Passage>, u64), Self::Error>> + Send;

    /// Keeps passages' vectors by the embedding model `model`.
    fn keep_meanings(&self, model: &str, meanings: &[PassageMeaning]) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// The text of each stored document among `hashes` (one not stored is missing from the map).
    fn document_texts(&self, hashes: &[&str]) -> impl Future<Output = Result<DocumentTexts, Self::Error>> + Send;

    /// Each stored image among `hashes`, as a model is shown it (one not stored is missing).
    fn images(&self, hashes: &[&str]) -> impl Future<Output = Result<Vec<ImageInput>, Self::Error>> + Send;

    /// Adds a tool's result after `parent` (the reply that called it, or the result before it),
    /// with its call's record, and puts it on the path on show.
    fn append_tool_result(
        &self,
        chat: ChatId,
        parent: MessageId,
        content: &str,
        run: &ToolRun,
    ) -> impl Future<Output = Result<StoredMessage, Self::Error>> + Send;

    fn update_reply(
        &self,
        id: MessageId,
        content: &str,
        status: MessageStatus,
        stats: Option<&ReplyStats>,
    ) -> impl Future<Output = Result<StoredMessage, Self::Error>> + Send;

    /// Keeps a reply's tokens with their distributions (replacing any kept before).
    fn save_token_probs(&self, id: MessageId, tokens: &[TokenProbs]) -> impl Future<Output = Result<(), Self::Error>> + Send;

    /// A reply's tokens with their distributions; empty when none were kept.
    fn token_probs(&self, id: MessageId) -> impl Future<Output = Result<Vec<TokenProbs>, Self::Error>> + Send;
}
