//! `ChatService`'s guarantees, each on a scripted backend and an in-memory store under tokio's
//! paused clock (exact and instant): the question saved first, whether or not the backend takes
//! the request; a streaming reply never more than the flush interval behind what was shown, and
//! never ahead of it; failed, crashed and stopped replies kept with their text; the last save
//! tried again, and a full disk said; one turn at a time per chat, freed when the caller gives up.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::{
    Attachment, AttachmentKind, BackendError, ChatMessage, ChatService, FinishReason, MAX_ATTACHMENTS, MessageStatus, OfferedTools, Role,
    SamplingParams, StoredMessage, ToolChoice, ToolResult, ToolRun, ToolRunEnd, ToolSpec, Turn, TurnError, TurnEvent, WrittenCall,
};
use hearth_testkit::{MemoryStore, ScriptedBackend, Step};
use tokio::time::Instant;

const CHAT: i64 = 1;
const FLUSH: Duration = Duration::from_millis(500);

struct Fixture {
    backend: ScriptedBackend,
    store: MemoryStore,
    service: ChatService<ScriptedBackend, MemoryStore>,
}

fn fixture() -> Fixture {
    let (backend, store) = (ScriptedBackend::new(), MemoryStore::new());
    store.chat(CHAT, "Be brief.");
    let service = ChatService::with_flush_interval(Arc::new(backend.clone()), Arc::new(store.clone()), FLUSH);
    Fixture { backend, store, service }
}

/// What the caller was shown, in order, with when.
#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<(Instant, TurnEvent)>>>);

impl Seen {
    fn record(&self) -> impl FnMut(TurnEvent) + Send + 'static {
        let seen = self.0.clone();
        move |event| seen.lock().unwrap().push((Instant::now(), event))
    }

    fn events(&self) -> Vec<TurnEvent> {
        self.0.lock().unwrap().iter().map(|(_, e)| e.clone()).collect()
    }

    /// The reply's text as shown, after each delta.
    fn shown(&self) -> Vec<(Instant, String)> {
        let mut text = String::new();
        let mut shown = Vec::new();
        for (at, event) in self.0.lock().unwrap().iter() {
            if let TurnEvent::Delta(delta) = event {
                text.push_str(delta);
                shown.push((*at, text.clone()));
            }
        }
        shown
    }
}

fn words(count: usize, every_ms: u64) -> Vec<Step> {
    let mut steps: Vec<Step> = (0..count).map(|i| Step::text(every_ms, &format!("w{i} "))).collect();
    steps.push(Step::Finish(FinishReason::EndOfTurn));
    steps
}

/// Sends `content` in the chat, telling `seen` what the window would be shown.
fn send<'a>(f: &'a Fixture, content: &'a str, seen: &Seen) -> impl Future<Output = Result<StoredMessage, TurnError>> + 'a {
    f.service.send(CHAT, content, SamplingParams::default(), seen.record())
}

#[tokio::test(start_paused = true)]
async fn the_question_is_saved_before_any_of_the_reply_is_shown() {
    let f = fixture();
    f.backend.then(vec![Step::text(50, "Hello"), Step::text(50, " there."), Step::Finish(FinishReason::EndOfTurn)]);
    let seen = Seen::default();
    let reply = send(&f, "Hi!", &seen).await.unwrap();

    let events = seen.events();
    let TurnEvent::UserSaved(user) = &events[0] else { panic!("first shown: {:?}", events[0]) };
    assert_eq!((user.role, user.content.as_str(), user.status), (Role::User, "Hi!", MessageStatus::Complete));
    assert!(matches!(&events[1], TurnEvent::ReplyStarted { message_id, .. } if *message_id == reply.id), "{events:?}");
    assert!(events[2..].iter().all(|e| matches!(e, TurnEvent::Delta(_))), "{events:?}");
    // The first write is the question, before the reply's first.
    let writes = f.store.writes();
    assert_eq!((writes[0].role, writes[0].content.as_str()), (Role::User, "Hi!"), "{writes:?}");
    assert_eq!((reply.content.as_str(), reply.status, reply.parent_id), ("Hello there.", MessageStatus::Complete, Some(user.id)));
    // The backend was asked with the system prompt and the question.
    let asked = &f.backend.asked()[0];
    let sent: Vec<_> = asked.messages.iter().map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(sent, [(Role::System, "Be brief."), (Role::User, "Hi!")]);
    assert_eq!(asked.conversation, Some(CHAT));
}

#[tokio::test(start_paused = true)]
async fn a_searchs_progress_is_shown_at_most_once_a_window_update() {
    let f = fixture();
    // A beam search's steps every 30 ms, then its reply whole.
    let mut steps: Vec<Step> = (1..=10).map(|tokens| Step::Searching(Duration::from_millis(30), tokens)).collect();
    steps.extend([Step::text(30, "Paris."), Step::Finish(FinishReason::EndOfTurn)]);
    f.backend.then(steps);
    let seen = Seen::default();
    let reply = send(&f, "The capital of France?", &seen).await.unwrap();
    assert_eq!(reply.content, "Paris.");
    let told: Vec<u32> =
        seen.events().iter().filter_map(|e| if let TurnEvent::Searching { tokens } = e { Some(*tokens) } else { None }).collect();
    // At 30 ms, then the first step 100 ms (WINDOW_UPDATE_INTERVAL) after: 150 ms, 270 ms.
    assert_eq!(told, [1, 5, 9], "{:?}", seen.events());
}

#[tokio::test(start_paused = true)]
async fn the_question_is_kept_when_the_backend_refuses() {
    let f = fixture();
    f.backend.then_refuse(BackendError::NoModel);
    let seen = Seen::default();
    let error = send(&f, "Anyone there?", &seen).await.unwrap_err();
    assert!(matches!(error, TurnError::Backend { error: BackendError::NoModel, reply: None }), "{error:?}");
    let path = f.store.path(CHAT);
    assert_eq!(path.len(), 1, "only the question: {path:?}");
    assert_eq!((path[0].content.as_str(), path[0].status), ("Anyone there?", MessageStatus::Complete));
    assert!(matches!(&seen.events()[..], [TurnEvent::UserSaved(_)]), "{:?}", seen.events());
}

#[tokio::test(start_paused = true)]
async fn a_streaming_reply_is_saved_within_the_flush_interval_and_never_ahead_of_the_window() {
    let f = fixture();
    f.backend.then(words(60, 37));
    let seen = Seen::default();
    let reply = send(&f, "Count.", &seen).await.unwrap();
    let shown = seen.shown();
    let saves: Vec<_> = f.store.writes().into_iter().filter(|w| w.message == reply.id && !w.failed).collect();
    assert!(saves.len() > 4, "the reply was flushed as it streamed: {saves:?}");
    // Never ahead: each save holds text the window already had.
    for save in &saves {
        let window = shown.iter().rev().find(|(at, _)| *at <= save.at).map_or("", |(_, text)| text.as_str());
        assert!(window.starts_with(&save.content), "saved {:?} when the window showed {window:?}", save.content);
    }
    // Never behind by more than the flush interval: what was shown at any moment is saved by then.
    for (at, text) in &shown {
        let saved = saves.iter().find(|s| s.content.len() >= text.len()).unwrap_or_else(|| panic!("{text:?} never saved"));
        assert!(saved.at <= *at + FLUSH, "{text:?} shown at {at:?} was saved {:?} later", saved.at - *at);
    }
    assert_eq!(reply.content, (0..60).map(|i| format!("w{i} ")).collect::<String>());
}

#[tokio::test(start_paused = true)]
async fn a_failed_reply_keeps_its_text_and_a_crash_marks_it_interrupted() {
    let cases = [
        (BackendError::Engine("the GPU went away".into()), MessageStatus::Failed, None),
        (
            BackendError::EngineCrashed { cause: "the engine process crashed (SIGSEGV)".into() },
            MessageStatus::Interrupted,
            Some("the engine process crashed (SIGSEGV)"),
        ),
    ];
    for (failure, status, interrupted_by) in cases {
        let f = fixture();
        f.backend.then(vec![Step::text(20, "Part"), Step::text(20, " of it"), Step::Fail(failure.clone())]);
        let error = send(&f, "Go on.", &Seen::default()).await.unwrap_err();
        let TurnError::Backend { error, reply: Some(reply) } = error else { panic!("{error:?}") };
        assert_eq!(error, failure);
        assert_eq!((reply.content.as_str(), reply.status), ("Part of it", status));
        let kept = f.store.get(reply.id).unwrap();
        assert_eq!((kept.content.as_str(), kept.status), ("Part of it", status));
        assert_eq!(kept.stats.and_then(|s| s.interrupted_by).as_deref(), interrupted_by);
    }
}

#[tokio::test(start_paused = true)]
async fn stop_keeps_the_text_and_one_turn_runs_per_chat() {
    let f = fixture();
    f.backend.then(vec![Step::text(20, "Once upon"), Step::Hang]);
    let seen = Seen::default();
    let (first, second) = tokio::join!(send(&f, "A story?", &seen), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let second = send(&f, "And another?", &Seen::default()).await;
        assert!(f.service.stop(CHAT), "a reply was running");
        second
    });
    assert!(matches!(second, Err(TurnError::Busy)), "{second:?}");
    let first = first.unwrap();
    assert_eq!((first.content.as_str(), first.status), ("Once upon", MessageStatus::Stopped));
    assert!(!f.service.stop(CHAT), "nothing runs any more");

    // Continue writes on from the stopped reply, which the backend is shown as unfinished.
    f.backend.then(vec![Step::text(20, " a time."), Step::Finish(FinishReason::EndOfTurn)]);
    let continued = f.service.run(CHAT, Turn::Continue { reply: first.id }, SamplingParams::default(), |_| {}).await.unwrap();
    assert_eq!((continued.id, continued.content.as_str(), continued.status), (first.id, "Once upon a time.", MessageStatus::Complete));
    let asked = f.backend.asked().pop().unwrap();
    assert!(asked.continue_last);
    assert_eq!(asked.messages.last().map(|m| (m.role, m.content.as_str())), Some((Role::Assistant, "Once upon")));
}

#[tokio::test(start_paused = true)]
async fn the_last_save_is_tried_again_and_a_full_disk_is_said() {
    for (failures, outcome) in [(2, Ok("Hello there")), (u32::MAX, Err(()))] {
        let f = fixture();
        f.backend.then(vec![Step::text(10, "Hello"), Step::text(1000, " there"), Step::Finish(FinishReason::EndOfTurn)]);
        let (result, ()) = tokio::join!(send(&f, "Hi", &Seen::default()), async {
            // After "Hello" was flushed, before the end: the disk fills.
            tokio::time::sleep(Duration::from_millis(800)).await;
            f.store.fail_writes(failures);
        });
        match outcome {
            Ok(text) => {
                let reply = result.unwrap();
                assert_eq!((reply.content.as_str(), reply.status), (text, MessageStatus::Complete));
            }
            Err(()) => {
                let error = result.unwrap_err();
                assert!(matches!(error, TurnError::ReplyNotSaved(_)), "{error:?}");
                assert!(error.to_string().contains("free disk space"), "{error}");
                // Kept as last flushed: nothing the window showed half a second earlier is lost.
                let reply = f.store.path(CHAT).pop().unwrap();
                assert_eq!((reply.role, reply.content.as_str()), (Role::Assistant, "Hello"));
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_turn_given_up_by_its_caller_cancels_the_reply_and_frees_the_chat() {
    let f = fixture();
    f.backend.then(vec![Step::text(20, "Thinking"), Step::Hang]);
    let given_up = tokio::time::timeout(Duration::from_millis(200), send(&f, "Slow one", &Seen::default())).await;
    assert!(given_up.is_err(), "the turn was still running");
    f.backend.then(words(2, 10));
    let next = send(&f, "Quick one", &Seen::default()).await.unwrap();
    assert_eq!(next.content, "w0 w1 ");
}

#[tokio::test(start_paused = true)]
async fn regenerate_and_edit_answer_beside_the_original() {
    let f = fixture();
    f.backend.then(words(1, 10)).then(words(2, 10)).then(words(3, 10));
    let first = send(&f, "Pick a word.", &Seen::default()).await.unwrap();
    let again = f.service.run(CHAT, Turn::Regenerate { reply: first.id }, SamplingParams::default(), |_| {}).await.unwrap();
    assert_eq!((again.parent_id, again.siblings.clone()), (first.parent_id, vec![first.id, again.id]));
    let question = first.parent_id.unwrap();
    let edited = f.service.run(CHAT, Turn::Edit { message: question, content: "Pick two." }, SamplingParams::default(), |_| {});
    let edited = edited.await.unwrap();
    let path: Vec<_> = f.store.path(CHAT).into_iter().map(|m| m.content).collect();
    assert_eq!(path, ["Pick two.", "w0 w1 w2 "]);
    assert_eq!(edited.content, "w0 w1 w2 ");
    // The regenerated reply was asked without the reply it stands beside.
    let asked = &f.backend.asked()[1];
    assert_eq!(asked.messages.last().map(|m| m.content.as_str()), Some("Pick a word."));
}

/// One tool, `find_item`, offered as the window offers tools.
fn find_item_offered() -> OfferedTools {
    let parameters = serde_json::json!({"type": "object"});
    let tools = vec![ToolSpec { name: "find_item".into(), description: String::new(), parameters }];
    OfferedTools { tools, choice: ToolChoice::Auto, parallel: true }
}

#[tokio::test(start_paused = true)]
async fn tool_results_are_saved_after_their_call_before_the_reply_that_reads_them() {
    let f = fixture();
    let call = "<tool_call>\n{\"name\":\"find_item\",\"arguments\":{\"item\":\"kettle\"}}\n</tool_call>";
    f.backend.then(vec![Step::text(10, call), Step::Finish(FinishReason::EndOfTurn)]).then(words(2, 10));
    let tools = find_item_offered();
    let caller = f.service.run_with_tools(CHAT, Turn::send("Kettle?"), SamplingParams::default(), Some(tools.clone()), |_| {});
    let caller = caller.await.unwrap();
    assert_eq!(caller.tool_calls, [WrittenCall { name: "find_item".into(), arguments: r#"{"item":"kettle"}"#.into() }]);
    // While the call runs, the turn of its result is read ahead (the result empty), nothing saved.
    let writes = f.store.writes().len();
    f.service.prefill_results(CHAT, &caller, SamplingParams::default(), Some(tools.clone())).await.unwrap();
    assert_eq!(f.store.writes().len(), writes);

    let run = ToolRun {
        name: "find_item".into(),
        server: Some("kitchen".into()),
        arguments: r#"{"item":"kettle"}"#.into(),
        end: ToolRunEnd::Ran,
        is_error: false,
        elapsed_ms: 3,
        chars: 21,
        cut: false,
    };
    let results = [ToolResult { content: "In the left cupboard.".into(), run: run.clone() }];
    let seen = Seen::default();
    let turn = Turn::ToolResults { reply: caller.id, results: &results };
    let reply = f.service.run_with_tools(CHAT, turn, SamplingParams::default(), Some(tools.clone()), seen.record()).await.unwrap();

    // The result is saved first, after its call, and the reply follows it.
    let TurnEvent::UserSaved(result) = &seen.events()[0] else { panic!("{:?}", seen.events()) };
    assert_eq!((result.role, result.parent_id, result.tool.as_ref()), (Role::Tool, Some(caller.id), Some(&run)));
    assert_eq!(reply.parent_id, Some(result.id));
    let writes = f.store.writes();
    let result_write = writes.iter().position(|w| w.role == Role::Tool).unwrap();
    assert!(writes[result_write + 1..].iter().all(|w| w.role == Role::Assistant), "{writes:?}");
    // The backend read the result in the user's turn, after the call, with the tools offered;
    // the read-ahead before it asked for the same, the result empty.
    let (ahead, asked) = (&f.backend.asked()[1], &f.backend.asked()[2]);
    let last: Vec<_> = asked.messages.iter().rev().take(2).map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(last, [(Role::Tool, "In the left cupboard."), (Role::Assistant, call)]);
    assert_eq!(asked.tools.as_ref(), Some(&tools));
    assert!(ahead.prefill && !ahead.continue_last && ahead.tools == asked.tools);
    fn emptied(m: &ChatMessage) -> (Role, &str) {
        (m.role, if m.role == Role::Tool { "" } else { m.content.as_str() })
    }
    assert_eq!(ahead.messages.iter().map(emptied).collect::<Vec<_>>(), asked.messages.iter().map(emptied).collect::<Vec<_>>());
    assert_eq!(ahead.messages.last().map(|m| m.content.as_str()), Some(""));
}

#[tokio::test(start_paused = true)]
async fn a_draft_is_read_ahead_only_while_the_chat_is_idle() {
    let f = fixture();
    // The tools the send will offer go with the draft: they are in the prompt it reads.
    let tools = find_item_offered();
    f.service.prefill(CHAT, "Half a thou", &[], true, SamplingParams::default(), Some(tools.clone())).await.unwrap();
    f.service.prefill(CHAT, "   ", &[], false, SamplingParams::default(), None).await.unwrap();
    let asked = f.backend.asked();
    assert_eq!(asked.len(), 1, "a blank draft is not sent");
    assert!(asked[0].prefill && asked[0].continue_last);
    assert_eq!(asked[0].tools.as_ref(), Some(&tools));
    assert_eq!(asked[0].messages.last().map(|m| (m.role, m.content.as_str())), Some((Role::User, "Half a thou")));

    f.backend.then(vec![Step::text(20, "…"), Step::Hang]);
    tokio::join!(send(&f, "Hello", &Seen::default()), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        f.service.prefill(CHAT, "Next question", &[], false, SamplingParams::default(), None).await.unwrap();
        f.service.stop(CHAT);
    })
    .0
    .unwrap();
    assert_eq!(f.backend.asked().iter().filter(|a| a.prefill).count(), 1, "nothing read ahead while a reply runs");
}

#[tokio::test(start_paused = true)]
async fn a_reply_is_saved_with_the_time_it_reasoned() {
    let f = fixture();
    // The prompt takes 300 ms; the block is written over 1.2 s from its first text; the answer after.
    f.backend.then(vec![
        Step::text(300, "<think>Two"),
        Step::text(400, " and two"),
        Step::text(800, ".</think>\n\n"),
        Step::text(900, "Four."),
        Step::Finish(FinishReason::EndOfTurn),
    ]);
    let reply = send(&f, "Two and two?", &Seen::default()).await.unwrap();
    assert_eq!(reply.content, "<think>Two and two.</think>\n\nFour.");
    assert_eq!(reply.stats.and_then(|s| s.reasoning_ms), Some(1200.0));

    f.backend.then(vec![Step::text(300, "No block."), Step::Finish(FinishReason::EndOfTurn)]);
    let plain = send(&f, "Again?", &Seen::default()).await.unwrap();
    assert_eq!(plain.stats.and_then(|s| s.reasoning_ms), None, "a reply without reasoning has no time of it");
}

#[tokio::test(start_paused = true)]
async fn attached_documents_are_read_whole_before_the_question_at_every_turn() {
    let f = fixture();
    let hash = "ab".repeat(32);
    f.store.keep_document(&hash, "The kettle holds 1.7 litres.");
    let file = Attachment { hash: hash.clone(), name: "kettle.md".into(), kind: AttachmentKind::Document, bytes: 28, chars: 28 };
    f.backend.then(words(1, 10)).then(words(1, 10)).then(words(1, 10)).then(words(1, 10));
    let attached = [file.clone()];
    let seen = Seen::default();
    // A file alone is a question; its text is what the model reads, the message keeps its own.
    let reply = f.service.run(CHAT, Turn::Send { content: "", attachments: &attached }, SamplingParams::default(), seen.record());
    reply.await.unwrap();
    let TurnEvent::UserSaved(user) = &seen.events()[0] else { panic!("{:?}", seen.events()) };
    assert_eq!((user.content.as_str(), user.attachments.clone()), ("", vec![file.clone()]));
    let document = "<document name=\"kettle.md\">\nThe kettle holds 1.7 litres.\n</document>\n\n";
    assert_eq!(f.backend.asked()[0].messages.last().unwrap().content, document);
    // The next question reads it again as the same text, so its tokens stay cached.
    send(&f, "How much?", &Seen::default()).await.unwrap();
    let asked: Vec<_> = f.backend.asked()[1].messages.iter().map(|m| m.content.clone()).collect();
    assert_eq!(asked, ["Be brief.", document, "w0 ", "How much?"]);
    // An edit keeps the files of the message it stands beside.
    let edited = f.service.run(CHAT, Turn::Edit { message: user.id, content: "Sum it up." }, SamplingParams::default(), |_| {});
    edited.await.unwrap();
    assert_eq!(f.backend.asked()[2].messages.last().unwrap().content, format!("{document}Sum it up."));
    assert_eq!(f.store.path(CHAT)[0].attachments, std::slice::from_ref(&file));

    // A file no longer stored, too many files, and a name that is no hash are refused before
    // anything is saved.
    let gone = Attachment { hash: "cd".repeat(32), name: "gone.pdf".into(), ..file.clone() };
    let forged = Attachment { hash: "../../etc/passwd".into(), name: "passwd".into(), ..file.clone() };
    let many = vec![file.clone(); MAX_ATTACHMENTS + 1];
    let saved = f.store.path(CHAT).len();
    for (files, expected) in [
        (vec![gone], "gone.pdf is no longer stored; attach it again"),
        (vec![forged], "passwd is not a stored attachment"),
        (many, "a message carries at most 16 files, not 17"),
    ] {
        let refused = f.service.run(CHAT, Turn::Send { content: "Read it.", attachments: &files }, SamplingParams::default(), |_| {});
        let Err(TurnError::InvalidInput(why)) = refused.await else { panic!("{expected}: accepted") };
        assert_eq!(why, expected);
        // Read ahead while typing, the same files are refused alike, and nothing is read.
        let asked = f.backend.asked().len();
        let ahead = f.service.prefill(CHAT, "Read it.", &files, false, SamplingParams::default(), None).await;
        assert!(matches!(ahead, Err(TurnError::InvalidInput(why)) if why == expected), "{expected}: read ahead");
        assert_eq!(f.backend.asked().len(), asked);
    }
    assert_eq!(f.store.path(CHAT).len(), saved);
    // A file attached before a word is typed is read ahead at once, as a send would give it.
    f.service.prefill(CHAT, "", &attached, false, SamplingParams::default(), None).await.unwrap();
    let ahead = f.backend.asked().into_iter().last().unwrap();
    assert!(ahead.prefill && !ahead.continue_last);
    assert_eq!(ahead.messages.last().unwrap().content, document);
    let empty = f.service.run(CHAT, Turn::send(" "), SamplingParams::default(), |_| {}).await;
    assert!(matches!(empty, Err(TurnError::InvalidInput(why)) if why == "the message is empty"));
}

/// A manual of ten paragraphs of about 1,180 characters, each on its own subject: too long to
/// go whole in a 4,096-token context (room for 9,216 characters of documents).
fn manual() -> String {
    let subjects = [
        "Filling: pour water up to the line marked MAX, never above it, with the lid closed.",
        "Descaling: dissolve two spoons of citric acid in the water, boil, and rinse twice.",
        "Warranty: the kettle is guaranteed for three years from the date on the receipt.",
        "Cleaning: wipe the outside with a damp cloth; never put the base in water.",
        "Safety: keep the cord away from the hob and out of the reach of children.",
        "Storage: wind the cord under the base and keep the kettle somewhere dry.",
        "Repairs: only an authorised service centre may open the base or the switch.",
        "Recycling: at the end of its life take the kettle to an electrical waste point.",
        "Noise: a rumble while heating is normal and comes from the element.",
        "Lid: press the button on the handle to open it; it locks when closed.",
    ];
    subjects.iter().map(|s| format!("{s} {}\n\n", "More words on the same subject follow here. ".repeat(25))).collect()
}

/// An embedding model as a stand-in: one dimension per subject, known by its words (the real
/// model is tested in the app's tests); `fails` plays a model that cannot be read.
struct Subjects {
    fails: bool,
}

impl hearth_core::Embedder for Subjects {
    fn model(&self) -> Option<String> {
        Some("subjects".into())
    }

    fn embed(
        &self,
        texts: Vec<String>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<hearth_core::Embedded, hearth_core::EmbedError>> + Send + '_>> {
        const SUBJECTS: [&[&str]; 3] = [&["repair", "fix", "mend"], &["warrant", "guarantee", "broke"], &["cord", "cable"]];
        let fails = self.fails;
        Box::pin(async move {
            if fails {
                return Err(hearth_core::EmbedError("the model crashed".into()));
            }
            let vectors = texts
                .iter()
                .map(|text| {
                    let text = text.to_lowercase();
                    let mut v: Vec<f32> = SUBJECTS.iter().map(|words| words.iter().filter(|w| text.contains(*w)).count() as f32).collect();
                    v.push(0.1);
                    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    v.iter().map(|x| x / norm).collect()
                })
                .collect();
            Ok(hearth_core::Embedded { model: "subjects".into(), vectors })
        })
    }
}

/// With an embedding model, a question that shares no telling word with its answer ("fix" for
/// repairs) is given the passage that answers it, every passage embedded first;
/// a model that fails leaves words alone to rank them, and the turn goes on.
#[tokio::test(start_paused = true)]
async fn an_embedding_model_finds_passages_worded_apart_and_one_that_fails_costs_nothing() {
    for fails in [false, true] {
        let (backend, store) = (ScriptedBackend::new(), MemoryStore::new());
        store.chat(CHAT, "");
        let mut service = ChatService::with_flush_interval(Arc::new(backend.clone()), Arc::new(store.clone()), FLUSH);
        service.set_embedder(Arc::new(Subjects { fails }));
        backend.set_context_tokens(Some(4096));
        let (hash, text) = ("cd".repeat(32), manual());
        store.keep_document(&hash, &text);
        let file = Attachment {
            hash,
            name: "manual.md".into(),
            kind: AttachmentKind::Document,
            bytes: text.len() as u64,
            chars: text.len() as u64,
        };
        backend.then(words(1, 10));
        let turn = Turn::Send { content: "Who may fix it when it stops heating?", attachments: std::slice::from_ref(&file) };
        service.run(CHAT, turn, SamplingParams::default(), |_| {}).await.unwrap();
        let given = &store.path(CHAT)[0].passages;
        assert!(!given.is_empty(), "{fails}");
        let found = given.iter().any(|p| p.text.starts_with("Repairs:"));
        assert_eq!(found, !fails, "fails {fails}: {:?}", given.iter().map(|p| &p.text[..12]).collect::<Vec<_>>());
    }
}

#[tokio::test(start_paused = true)]
async fn documents_too_long_to_go_whole_give_the_question_passages_kept_with_it() {
    let f = fixture();
    f.backend.set_context_tokens(Some(4096));
    let hash = "ab".repeat(32);
    let text = manual();
    f.store.keep_document(&hash, &text);
    let file =
        Attachment { hash, name: "manual.md".into(), kind: AttachmentKind::Document, bytes: text.len() as u64, chars: text.len() as u64 };
    f.backend.then(words(1, 10)).then(words(1, 10)).then(words(1, 10)).then(words(1, 10));
    let seen = Seen::default();
    let turn = Turn::Send { content: "How does descaling work?", attachments: std::slice::from_ref(&file) };
    f.service.run(CHAT, turn, SamplingParams::default(), seen.record()).await.unwrap();
    let TurnEvent::UserSaved(user) = &seen.events()[0] else { panic!("{:?}", seen.events()) };
    let best = &user.passages[0];
    assert!(best.text.starts_with("Descaling:") && best.name == "manual.md" && best.ordinal > 0, "{best:?}");
    assert!(user.passages.len() <= hearth_core::RETRIEVED_PASSAGES);
    let asked = f.backend.asked()[0].messages.last().unwrap().content.clone();
    assert!(asked.starts_with(&format!("<passage document=\"manual.md\" number=\"{}\">\nDescaling:", best.ordinal + 1)), "{asked}");
    assert!(asked.ends_with("</passage>\n\nHow does descaling work?") && !asked.contains("<document"), "{asked}");
    assert_eq!(f.store.path(CHAT)[0].passages, user.passages, "kept with the question");

    // A follow-up without files is given passages of the same document that match it, within
    // what the first question's passages left of the budget; the first question reads as before
    // (its tokens stay cached).
    send(&f, "What does the warranty cover?", &Seen::default()).await.unwrap();
    let follow_up = f.backend.asked()[1].messages.clone();
    assert_eq!(follow_up[1].content, asked);
    assert!(follow_up[3].content.contains("\nWarranty:") && follow_up[3].content.ends_with("What does the warranty cover?"));
    let given = &f.store.path(CHAT)[2].passages;
    assert!(given[0].text.starts_with("Warranty:") && given.len() < user.passages.len(), "{given:?}");
    // One with nothing to match is given nothing.
    send(&f, "Thanks!", &Seen::default()).await.unwrap();
    assert!(f.store.path(CHAT)[4].passages.is_empty());

    // With a model whose context holds it, the same file goes whole.
    f.backend.set_context_tokens(None);
    let turn = Turn::Send { content: "Summarise it.", attachments: std::slice::from_ref(&file) };
    f.service.run(CHAT, turn, SamplingParams::default(), |_| {}).await.unwrap();
    let whole = f.backend.asked()[3].messages.last().unwrap().content.clone();
    assert!(whole.starts_with("<document name=\"manual.md\">\nFilling:") && whole.ends_with("Summarise it."));
    assert!(f.store.path(CHAT)[6].passages.is_empty());
}

/// An image attached to a question is shown to the model with it (its bytes from the store, read
/// as no text), and again with that message at every later turn, so its cells stay cached; one
/// no longer stored is refused before anything is saved.
#[tokio::test(start_paused = true)]
async fn an_attached_image_goes_with_its_question_at_every_turn() {
    let f = fixture();
    let image = hearth_testkit::images::gradient();
    f.store.keep_image(&image.hash, &image.bytes);
    let file = Attachment { hash: image.hash.clone(), name: "gradient.bmp".into(), kind: AttachmentKind::Image, bytes: 3126, chars: 0 };
    f.backend.then(words(1, 5)).then(words(1, 5));
    let turn = Turn::Send { content: "What is this?", attachments: std::slice::from_ref(&file) };
    f.service.run(CHAT, turn, SamplingParams::default(), |_| {}).await.unwrap();
    let asked = f.backend.asked()[0].messages.last().unwrap().clone();
    assert_eq!((asked.content.as_str(), asked.images.clone()), ("What is this?", vec![image.clone()]));
    assert_eq!(f.store.path(CHAT)[0].attachments, std::slice::from_ref(&file));

    send(&f, "And its colours?", &Seen::default()).await.unwrap();
    let later = f.backend.asked()[1].messages.clone();
    assert_eq!(later[1].images, [image], "the first question still shows it (after the system prompt)");
    assert!(later[3].images.is_empty());

    let gone = Attachment { hash: "cd".repeat(32), name: "gone.png".into(), ..file };
    let turn = Turn::Send { content: "And this?", attachments: std::slice::from_ref(&gone) };
    let error = f.service.run(CHAT, turn, SamplingParams::default(), |_| {}).await.unwrap_err();
    assert!(error.to_string().contains("gone.png is no longer stored; attach it again"), "{error}");
    assert_eq!(f.store.path(CHAT).len(), 4, "nothing saved");
}
