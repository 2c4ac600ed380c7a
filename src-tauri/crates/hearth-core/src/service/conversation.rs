//! The conversation a backend reads: the chat's messages, each user message with its documents
//! whole or the passages it was given, and the passages retrieved for a new question.

use super::{ChatService, HistoryStore, Question, TurnError};
use crate::{
    Attachment, AttachmentKind, ChatBackend, ChatMessage, DocumentTexts, ImageInput, MAX_ATTACHMENTS, Meaning, MeaningError, ModelTarget,
    Passage, RETRIEVED_PASSAGES, Role, StoredMessage, document_budget, embed_passages, with_documents, with_passages,
};

impl<B: ChatBackend, S: HistoryStore> ChatService<B, S> {
    /// The messages a backend should see: the chat's system prompt, then the history but replies
    /// that produced no text, then the new `question` if any; each user message with its
    /// documents — whole, or the passages it was given — and the passages retrieved for the new
    /// question (saved with it; see [`Self::retrieve`]): its documents go whole when they fit
    /// `target`'s context. A new question's document no longer stored is refused.
    pub(super) async fn conversation(
        &self,
        system: &str,
        history: &[StoredMessage],
        question: Option<&Question<'_>>,
        target: &ModelTarget,
    ) -> Result<(Vec<ChatMessage>, Vec<Passage>), TurnError> {
        let boxed = |e: S::Error| TurnError::Store(Box::new(e));
        let attached_files = question.map_or(&[][..], |q| &q.attachments[..]);
        let attached: Vec<&Attachment> = documents(attached_files).collect();
        // The documents' share of the context, less what earlier turns were given of theirs.
        let given: u64 = history.iter().map(document_chars).sum();
        let budget = document_budget(self.backend.context_tokens(target)).saturating_sub(given);
        let whole = attached.iter().map(|a| a.chars).sum::<u64>() <= budget;
        let read_whole = history.iter().filter(|m| m.passages.is_empty()).flat_map(|m| documents(&m.attachments));
        let hashes: Vec<&str> = read_whole.chain(attached.iter().copied().filter(|_| whole)).map(|a| a.hash.as_str()).collect();
        let texts = match hashes.is_empty() {
            true => DocumentTexts::new(),
            false => self.store.document_texts(&hashes).await.map_err(boxed)?,
        };
        if let Some(missing) = attached.iter().filter(|_| whole).find(|a| !texts.contains_key(&a.hash)) {
            return Err(TurnError::InvalidInput(format!("{} is no longer stored; attach it again", missing.name)));
        }
        let images = self.images(history, attached_files).await?;
        let retrieved = match question {
            Some(q) => self.retrieve(history, q, whole, budget).await?,
            None => Vec::new(),
        };
        let system = (!system.trim().is_empty()).then(|| ChatMessage::new(Role::System, system));
        let history = history.iter().filter(|m| !(m.role == Role::Assistant && m.content.is_empty())).map(|m| {
            let mut message = m.to_chat_message();
            if !m.passages.is_empty() {
                message.content = with_passages(&m.content, &m.passages);
            } else if !m.attachments.is_empty() {
                message.content = with_documents(&m.content, &m.attachments, &texts);
            }
            message.images = images_of(&m.attachments, &images);
            message
        });
        let question = question.map(|q| {
            let content = match retrieved.is_empty() {
                true => with_documents(q.content, &q.attachments, &texts),
                false => with_passages(q.content, &retrieved),
            };
            ChatMessage { images: images_of(&q.attachments, &images), ..ChatMessage::new(Role::User, content) }
        });
        Ok((system.into_iter().chain(history).chain(question).collect(), retrieved))
    }

    /// The passages a new question is given: the best for its text among its own documents when
    /// they are not read `whole`; a question without documents, among those earlier questions
    /// were given passages of (a follow-up: only passages that match it). A question whose
    /// documents go whole is given none, so a message with passages is one whose own documents
    /// were not read whole. The best passages are kept while they fit `budget` characters (a
    /// question's own documents always give their best one).
    async fn retrieve(
        &self,
        history: &[StoredMessage],
        question: &Question<'_>,
        whole: bool,
        budget: u64,
    ) -> Result<Vec<Passage>, TurnError> {
        let follow_up = documents(&question.attachments).next().is_none();
        let scope: Vec<&Attachment> = match (follow_up, whole) {
            (false, true) => Vec::new(),
            (false, false) => documents(&question.attachments).collect(),
            (true, _) => history.iter().filter(|m| !m.passages.is_empty()).flat_map(|m| documents(&m.attachments)).collect(),
        };
        let mut documents: Vec<&Attachment> = Vec::new();
        for document in scope {
            if !documents.iter().any(|d| d.hash == document.hash) {
                documents.push(document);
            }
        }
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let hashes: Vec<&str> = documents.iter().map(|d| d.hash.as_str()).collect();
        let meaning = self.meaning(&hashes, question.content).await?;
        let found = self.store.passages(&hashes, question.content, meaning.as_ref(), RETRIEVED_PASSAGES, !follow_up).await;
        let mut passages = found.map_err(|e| TurnError::Store(Box::new(e)))?;
        // A stored document always gives passages (its first, when none match).
        if passages.is_empty() && !follow_up {
            let name = &documents[0].name;
            return Err(TurnError::InvalidInput(format!("{name} is no longer stored; attach it again")));
        }
        let mut used = 0;
        passages.retain(|p| {
            used += p.text.len() as u64;
            used <= budget || (!follow_up && used == p.text.len() as u64)
        });
        for passage in &mut passages {
            passage.name = documents.iter().find(|d| d.hash == passage.hash).map_or_else(String::new, |d| d.name.clone());
        }
        Ok(passages)
    }

    /// The meaning of `question` by the embedding model the user chose, with every passage of the
    /// documents `hashes` given its vector first; `None` without a model, or when the model
    /// fails (said in the log; the passages are then ranked by their words alone, as without one).
    async fn meaning(&self, hashes: &[&str], question: &str) -> Result<Option<Meaning>, TurnError> {
        let Some(embedder) = self.embedder.as_deref() else { return Ok(None) };
        let embedded = async {
            let Some(model) = embed_passages(&*self.store, embedder, hashes, &|_| {}).await? else { return Ok(None) };
            let asked = embedder.embed(vec![question.to_owned()]).await?;
            let vector = asked.vectors.into_iter().next().filter(|_| asked.model == model);
            Ok(vector.map(|vector| Meaning { model, vector }))
        };
        match embedded.await {
            Ok(meaning) => Ok(meaning),
            Err(MeaningError::Store(e)) => Err(TurnError::Store(e)),
            Err(MeaningError::Embed(e)) => {
                tracing::warn!(error = %e, "passages ranked by their words alone: the embedding model failed");
                Ok(None)
            }
        }
    }

    /// The images the chat's messages and a new question's files show the model, read from the
    /// store; one of the new question's no longer stored is refused.
    async fn images(&self, history: &[StoredMessage], attached: &[Attachment]) -> Result<Vec<ImageInput>, TurnError> {
        let wanted: Vec<&Attachment> =
            history.iter().flat_map(|m| &m.attachments).chain(attached).filter(|a| a.kind == AttachmentKind::Image).collect();
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let hashes: Vec<&str> = wanted.iter().map(|a| a.hash.as_str()).collect();
        let images = self.store.images(&hashes).await.map_err(|e| TurnError::Store(Box::new(e)))?;
        if let Some(missing) =
            attached.iter().filter(|a| a.kind == AttachmentKind::Image).find(|a| !images.iter().any(|i| i.hash == a.hash))
        {
            return Err(TurnError::InvalidInput(format!("{} is no longer stored; attach it again", missing.name)));
        }
        Ok(images)
    }
}

/// A message's documents among its files (its images are shown, not read as text).
fn documents(files: &[Attachment]) -> impl Iterator<Item = &Attachment> {
    files.iter().filter(|a| a.kind == AttachmentKind::Document)
}

/// The images among `files`, from those read.
fn images_of(files: &[Attachment], read: &[ImageInput]) -> Vec<ImageInput> {
    files.iter().filter_map(|a| read.iter().find(|i| i.hash == a.hash).cloned()).collect()
}

/// The characters of documents a message gave the model: the passages it was given, else its
/// documents whole.
fn document_chars(message: &StoredMessage) -> u64 {
    match message.passages.is_empty() {
        true => message.attachments.iter().map(|a| a.chars).sum(),
        false => message.passages.iter().map(|p| p.text.len() as u64).sum(),
    }
}

/// A new question's files: at most `MAX_ATTACHMENTS`, each a stored content's hash.
pub(super) fn check_attachments(attachments: &[Attachment]) -> Result<(), TurnError> {
    if attachments.len() > MAX_ATTACHMENTS {
        return Err(TurnError::InvalidInput(format!("a message carries at most {MAX_ATTACHMENTS} files, not {}", attachments.len())));
    }
    match attachments.iter().find(|a| !Attachment::is_hash(&a.hash)) {
        Some(bad) => Err(TurnError::InvalidInput(format!("{} is not a stored attachment", bad.name))),
        None => Ok(()),
    }
}
