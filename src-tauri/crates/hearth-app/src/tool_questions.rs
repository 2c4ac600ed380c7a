//! The MCP servers' questions to the user mid-call (elicitation), each waiting for the window's
//! answer: asked in the order they came, withdrawn when the call that asked ends first (Stop, the
//! server gone), and a window that never answers leaves the call to its silence limit.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use hearth_core::FieldError;
use hearth_mcp::questions::{Answer, Asker, Question};
use serde::Serialize;
use tokio::sync::{oneshot, watch};
use ts_rs::TS;

/// A question waiting for its answer.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct PendingQuestion {
    /// What `answer_tool_question` names it by.
    #[ts(type = "number")]
    pub id: u64,
    #[serde(flatten)]
    pub question: Question,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    questions: BTreeMap<u64, (Question, oneshot::Sender<Answer>)>,
}

/// The questions waiting. Cloning is cheap.
#[derive(Clone)]
pub struct ToolQuestions {
    waiting: Arc<Mutex<Waiting>>,
    changed: Arc<watch::Sender<u64>>,
}

impl Default for ToolQuestions {
    fn default() -> Self {
        ToolQuestions { waiting: Arc::default(), changed: Arc::new(watch::channel(0).0) }
    }
}

/// Takes a question off the list when its asker's future ends, answered or dropped.
struct Withdraw {
    questions: ToolQuestions,
    id: u64,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if self.questions.waiting.lock().expect("questions poisoned").questions.remove(&self.id).is_some() {
            self.questions.bump();
        }
    }
}

impl ToolQuestions {
    /// What the MCP hub asks through: the question is listed for the window until answered.
    pub fn asker(&self) -> Asker {
        let questions = self.clone();
        Arc::new(move |question| {
            let questions = questions.clone();
            Box::pin(async move {
                let (answer, answered) = oneshot::channel();
                let id = {
                    let mut waiting = questions.waiting.lock().expect("questions poisoned");
                    waiting.next += 1;
                    let id = waiting.next;
                    waiting.questions.insert(id, (question, answer));
                    id
                };
                tracing::info!(id, "an MCP server asks the user a question");
                let _withdraw = Withdraw { questions: questions.clone(), id };
                questions.bump();
                answered.await.unwrap_or(Answer::Cancel)
            })
        })
    }

    /// The questions waiting, oldest first.
    pub fn pending(&self) -> Vec<PendingQuestion> {
        let waiting = self.waiting.lock().expect("questions poisoned");
        waiting.questions.iter().map(|(&id, (question, _))| PendingQuestion { id, question: question.clone() }).collect()
    }

    /// Gives question `id` its answer. A question by link said yes to is opened first with
    /// `open` (the system's browser) — the address the server gave, never one from the window;
    /// when it cannot be, the question stays, and the error says why.
    pub fn answer(&self, id: u64, answer: Answer, open: impl FnOnce(&str) -> Result<(), String>) -> Result<(), FieldError> {
        let mut waiting = self.waiting.lock().expect("questions poisoned");
        let Some((question, _)) = waiting.questions.get(&id) else {
            return Err(FieldError::new("id", "this question was withdrawn: the call that asked it has ended"));
        };
        if let (Some(link), Answer::Accept { .. }) = (&question.link, &answer) {
            open(&link.url).map_err(|e| FieldError::new("answer", format!("the browser could not be opened: {e}")))?;
            tracing::info!(id, host = link.host, "opened an MCP server's link");
        }
        let (_, reply) = waiting.questions.remove(&id).expect("the question is there");
        drop(waiting);
        let _ = reply.send(answer);
        self.bump();
        Ok(())
    }

    /// Told at every change of the list (a counter: read [`Self::pending`] then).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(message: &str) -> Question {
        Question { server: "kitchen".into(), message: message.into(), fields: Vec::new(), link: None }
    }

    /// Nothing is opened: a form's answer, or a link the user did not say yes to.
    fn never_open(url: &str) -> Result<(), String> {
        panic!("{url} was opened")
    }

    #[tokio::test]
    async fn questions_wait_in_order_for_their_answers_and_leave_with_their_calls() {
        let questions = ToolQuestions::default();
        let ask = questions.asker();
        let first = tokio::spawn(ask(question("Which shelf?")));
        let second = tokio::spawn(ask(question("Which jar?")));
        let mut changes = questions.subscribe();
        while questions.pending().len() < 2 {
            changes.changed().await.unwrap();
        }
        let listed: Vec<(u64, String)> = questions.pending().into_iter().map(|p| (p.id, p.question.message)).collect();
        assert_eq!(listed, [(1, "Which shelf?".into()), (2, "Which jar?".into())]);

        questions.answer(2, Answer::Decline, never_open).unwrap();
        assert_eq!(second.await.unwrap(), Answer::Decline);
        let error = questions.answer(2, Answer::Cancel, never_open).unwrap_err();
        assert_eq!((error.field.as_str(), error.message.as_str()), ("id", "this question was withdrawn: the call that asked it has ended"));

        // The call that asked ends first (Stop): its question is withdrawn.
        first.abort();
        let _ = first.await;
        assert!(questions.pending().is_empty());
    }

    #[tokio::test]
    async fn a_link_said_yes_to_is_opened_as_the_server_gave_it_and_stays_asked_when_it_cannot_be() {
        let questions = ToolQuestions::default();
        let ask = questions.asker();
        let link = hearth_mcp::link::link_of("https://bistro.example/link?session=7").unwrap();
        let asked = tokio::spawn(ask(Question { link: Some(link), ..question("Link your bistro account.") }));
        let mut changes = questions.subscribe();
        while questions.pending().is_empty() {
            changes.changed().await.unwrap();
        }
        let accept = || Answer::Accept { content: serde_json::Map::new() };
        // No browser: the question stays, and says why.
        let error = questions.answer(1, accept(), |_| Err("xdg-open is not installed".into())).unwrap_err();
        assert_eq!(error.message, "the browser could not be opened: xdg-open is not installed");
        assert_eq!(questions.pending().len(), 1);
        let mut opened = Vec::new();
        questions
            .answer(1, accept(), |url| {
                opened.push(url.to_owned());
                Ok(())
            })
            .unwrap();
        assert_eq!(opened, ["https://bistro.example/link?session=7"]);
        assert_eq!(asked.await.unwrap(), accept());
    }
}
