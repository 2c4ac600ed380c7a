//! One live session with an MCP server (rmcp's client): its tools, and calls with progress,
//! cancellation and a deadline that progress pushes back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest, ContentBlock,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability, Implementation,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ResourceContents, ServerResult, Tool, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use ts_rs::TS;

use crate::McpError;
use crate::config::McpTransport;
use crate::link::link_of;
use crate::oauth::{self, KeptSignIn};
use crate::questions::{Answer, Asker, Question, fields_of, with_defaults};
use crate::stdio::{self, Leftovers, Stopper};

/// A step of a running call, as the server tells it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct CallProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// A tool as the server describes it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// The JSON schema of its arguments.
    #[ts(type = "Record<string, unknown>")]
    pub input_schema: Value,
    /// The server says it changes nothing (`readOnlyHint`): a hint, never a permission.
    pub read_only: bool,
}

/// What a call gave back, as the model and the user read it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutcome {
    /// The result's content as text (images and other binary parts described, not inlined).
    pub text: String,
    /// The tool says it failed: its text says why, and the model reads it as such.
    pub is_error: bool,
    /// From the request sent to its answer.
    pub elapsed_ms: u64,
}

/// How a call runs.
#[derive(Debug, Clone)]
pub struct CallOptions {
    /// Cancelled: the server is told (`notifications/cancelled`) and the call ends at once.
    pub cancel: CancellationToken,
    /// The server's progress notifications for this call.
    pub progress: Option<mpsc::UnboundedSender<CallProgress>>,
    /// How long the server may stay silent: each progress notification starts it again.
    pub silence: Duration,
}

impl Default for CallOptions {
    fn default() -> Self {
        Self { cancel: CancellationToken::new(), progress: None, silence: Duration::from_secs(300) }
    }
}

type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<CallProgress>>>>;

/// Hearth's side of the protocol: who it is, where progress goes, and who answers the server's
/// questions (none: it is told Hearth asks none, and a question is declined).
struct Client {
    progress: ProgressRoutes,
    /// The server's name, and who asks the user its questions.
    asker: Option<(String, Asker)>,
}

impl ClientHandler for Client {
    /// The handshake names the newest protocol that has one (rmcp's default, 2026-07-28, moved
    /// the lifecycle out of `initialize`; servers and the conformance suite expect 2025-11-25).
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.asker.is_some() {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()).with_url(UrlElicitationCapability::new()));
        }
        ClientConfig::new(capabilities, Implementation::new("Hearth", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    /// A question for the user, asked in the window: a form (what is sent back fits it, with the
    /// defaults of the fields left out), or a page to open (its address checked first: one that
    /// does not pass is declined unseen; accepted, the app has opened it).
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some((server, asker)) = &self.asker else { return Ok(ElicitResult::new(ElicitationAction::Decline)) };
        let (question, fields) = match request {
            ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
                let fields = fields_of(&serde_json::to_value(&requested_schema).unwrap_or_default());
                (Question { server: server.clone(), message, fields: fields.clone(), link: None }, fields)
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => match link_of(&url) {
                Ok(link) => (Question { server: server.clone(), message, fields: Vec::new(), link: Some(link) }, Vec::new()),
                Err(why) => {
                    tracing::warn!(server, %why, "declined an MCP server's link unseen");
                    return Ok(ElicitResult::new(ElicitationAction::Decline));
                }
            },
            // A mode of a later protocol: not one Hearth says it answers.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        let link = question.link.is_some();
        Ok(match asker(question).await {
            Answer::Accept { .. } if link => ElicitResult::new(ElicitationAction::Accept),
            Answer::Accept { content } => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(with_defaults(&fields, &content)))
            }
            Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let route = self.progress.lock().expect("progress routes poisoned").get(&params.progress_token).cloned();
        if let Some(route) = route {
            let _ = route.send(CallProgress { progress: params.progress, total: params.total, message: params.message });
        }
    }
}

/// A session with one server.
pub struct Connection {
    service: RunningService<RoleClient, Client>,
    progress: ProgressRoutes,
    tools: Vec<McpTool>,
    /// A stdio server's process (none over HTTP).
    process: Option<Stopper>,
}

/// What the connection left behind for a failure's words (a stdio server's stderr and stray
/// output, and how it ended).
#[derive(Clone, Default)]
pub struct Trace {
    pub leftovers: Option<Arc<Mutex<Leftovers>>>,
    pub ended: Option<tokio::sync::watch::Receiver<Option<std::process::ExitStatus>>>,
}

/// Starts (stdio) or reaches (HTTP; with the token of its sign-in, `signed_in`, when one is kept)
/// a server, initializes the session within `start_within` and lists its tools. `trace` is filled as soon as a process exists, so a failure can be told with
/// what it wrote.
pub async fn connect(
    transport: &McpTransport,
    signed_in: Option<KeptSignIn>,
    asker: Option<(String, Asker)>,
    start_within: Duration,
    trace: &mut Trace,
) -> Result<Connection, McpError> {
    let progress = ProgressRoutes::default();
    let client = Client { progress: progress.clone(), asker };
    let (service, process) = match transport {
        McpTransport::Stdio { command, args, env, cwd } => {
            let process = stdio::spawn(command, args, env, cwd.as_deref())
                .map_err(|e| McpError::Spawn { command: command.clone(), why: e.to_string() })?;
            trace.leftovers = Some(process.leftovers.clone());
            trace.ended = Some(process.ended.clone());
            let stopper = process.stopper();
            let started = tokio::time::timeout(start_within, client.serve((process.reader, process.writer))).await;
            match started {
                Ok(Ok(service)) => (service, Some(stopper)),
                Ok(Err(e)) => {
                    stopper.stop().await;
                    return Err(McpError::Handshake(e.to_string()));
                }
                Err(_) => {
                    stopper.stop().await;
                    return Err(McpError::NoAnswer(start_within));
                }
            }
        }
        McpTransport::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = name.parse().map_err(|_| McpError::Header(name.clone()))?;
                let value = value.parse().map_err(|_| McpError::Header(format!("{name}")))?;
                custom.insert(name, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let started = match signed_in.filter(KeptSignIn::has_token) {
                Some(kept) => {
                    let transport = StreamableHttpClientTransport::with_client(oauth::signed_in_client(url, kept).await?, config);
                    tokio::time::timeout(start_within, client.serve(transport)).await
                }
                None => tokio::time::timeout(start_within, client.serve(StreamableHttpClientTransport::from_config(config))).await,
            };
            match started {
                Ok(Ok(service)) => (service, None),
                Ok(Err(e)) if e.auth_challenge().is_some() || e.to_string().contains("Auth required") => {
                    return Err(McpError::SignIn { challenge: e.auth_challenge().unwrap_or_default().to_owned() });
                }
                Ok(Err(e)) => return Err(McpError::Handshake(e.to_string())),
                Err(_) => return Err(McpError::NoAnswer(start_within)),
            }
        }
    };
    let mut connection = Connection { service, progress, tools: Vec::new(), process };
    let listed = tokio::time::timeout(start_within, connection.service.peer().list_all_tools()).await;
    match listed {
        Ok(Ok(tools)) => connection.tools = tools.into_iter().map(describe_tool).collect(),
        Ok(Err(e)) => {
            connection.close().await;
            return Err(call_error(e));
        }
        Err(_) => {
            connection.close().await;
            return Err(McpError::NoAnswer(start_within));
        }
    }
    Ok(connection)
}

fn describe_tool(tool: Tool) -> McpTool {
    McpTool {
        name: tool.name.into_owned(),
        title: tool.title,
        description: tool.description.map(|d| d.into_owned()).unwrap_or_default(),
        input_schema: Value::Object((*tool.input_schema).clone()),
        read_only: tool.annotations.and_then(|a| a.read_only_hint).unwrap_or(false),
    }
}

impl Connection {
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The session has ended: the server closed it, died, or was stopped.
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Calls `tool` with `arguments` (a JSON object). A server that first needs the user to open
    /// a page (`-32042`, URL elicitation required) has its pages asked about as questions by
    /// link; once the user opened them all, the call is made once more.
    pub async fn call(&self, tool: &str, arguments: Value, options: &CallOptions) -> Result<ToolOutcome, McpError> {
        let Value::Object(arguments) = arguments else { return Err(McpError::Arguments("they are not a JSON object".into())) };
        match self.call_once(tool, arguments.clone(), options).await {
            Err(Failure::PagesFirst { message, pages }) => {
                self.open_pages_first(&message, pages, &options.cancel).await?;
                self.call_once(tool, arguments, options).await.map_err(|failure| match failure {
                    Failure::PagesFirst { message, .. } => McpError::Refused(format!(
                        "{message} (the server still asks for a page to be opened first: finish there, then ask again)"
                    )),
                    Failure::Error(error) => error,
                })
            }
            Err(Failure::Error(error)) => Err(error),
            Ok(outcome) => Ok(outcome),
        }
    }

    /// Asks the user to open each page the server needs opened before the call; an error in
    /// words unless they opened them all (the app opens a page said yes to). Stop withdraws the
    /// question and ends the call.
    async fn open_pages_first(&self, message: &str, pages: Vec<(String, String)>, cancel: &CancellationToken) -> Result<(), McpError> {
        let Some((server, asker)) = &self.service.service().asker else { return Err(McpError::Refused(message.to_owned())) };
        for (asks, url) in pages {
            let link = link_of(&url)
                .map_err(|why| McpError::Refused(format!("{message} (Hearth declined the page it asks to open first: {why})")))?;
            let host = link.host.clone();
            let question = Question { server: server.clone(), message: asks, fields: Vec::new(), link: Some(link) };
            let answer = tokio::select! {
                answer = asker(question) => answer,
                () = cancel.cancelled() => return Err(McpError::Cancelled),
            };
            if !matches!(answer, Answer::Accept { .. }) {
                return Err(McpError::Refused(format!("{message} (the user did not open the page it asks to open first, on {host})")));
            }
        }
        Ok(())
    }

    async fn call_once(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        options: &CallOptions,
    ) -> Result<ToolOutcome, Failure> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut request_options = PeerRequestOptions::no_options();
        request_options.timeout = Some(options.silence);
        request_options.reset_timeout_on_progress = true;
        let started = Instant::now();
        let peer = self.service.peer();
        let handle = peer.send_request_with_option(request, request_options).await.map_err(call_failure)?;
        let (id, token) = (handle.id.clone(), handle.progress_token.clone());
        if let Some(route) = &options.progress {
            self.progress.lock().expect("progress routes poisoned").insert(token.clone(), route.clone());
        }
        let answer = tokio::select! {
            answer = handle.await_response() => answer.map_err(call_failure),
            () = options.cancel.cancelled() => {
                let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some("the user stopped it".into()))).await;
                Err(McpError::Cancelled.into())
            }
        };
        self.progress.lock().expect("progress routes poisoned").remove(&token);
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match answer? {
            ServerResult::CallToolResult(result) => {
                let mut text = result.content.iter().map(content_text).collect::<Vec<_>>().join("\n");
                if text.is_empty()
                    && let Some(structured) = &result.structured_content
                {
                    text = structured.to_string();
                }
                Ok(ToolOutcome { text, is_error: result.is_error.unwrap_or(false), elapsed_ms })
            }
            other => Err(McpError::Request(format!("the server answered the call with something else: {other:?}")).into()),
        }
    }

    /// Ends the session and kills the server's process now, from any thread (at quit).
    pub fn kill_now(&self) {
        self.service.cancellation_token().cancel();
        if let Some(process) = &self.process {
            process.kill_now();
        }
    }

    /// Ends the session, and the server's process with it.
    pub async fn close(&self) {
        self.service.cancellation_token().cancel();
        if let Some(process) = &self.process {
            process.stop().await;
        }
    }
}

/// A content block as text: text as it is; binary parts described.
fn content_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[an image, {}, {} bytes]", image.mime_type, image.data.len() / 4 * 3),
        ContentBlock::Audio(audio) => format!("[audio, {}, {} bytes]", audio.mime_type, audio.data.len() / 4 * 3),
        ContentBlock::Resource(resource) => match &resource.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => format!("[{uri}]\n{text}"),
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                format!("[{uri}: {}, {} bytes]", mime_type.as_deref().unwrap_or("binary"), blob.len() / 4 * 3)
            }
            _ => "[a resource Hearth cannot show]".into(),
        },
        ContentBlock::ResourceLink(link) => format!("[a link to {} ({})]", link.name, link.uri),
        _ => "[a part Hearth cannot show]".into(),
    }
}

/// Why one attempt at a call failed: an error, or pages the server needs opened first.
enum Failure {
    Error(McpError),
    /// `-32042`: the server's words, and each page's own words and address.
    PagesFirst {
        message: String,
        pages: Vec<(String, String)>,
    },
}

impl From<McpError> for Failure {
    fn from(error: McpError) -> Self {
        Failure::Error(error)
    }
}

/// MCP's "URL elicitation required": the call needs the user to open pages first.
const URL_ELICITATION_REQUIRED: i32 = -32042;

fn call_failure(error: ServiceError) -> Failure {
    if let ServiceError::McpError(data) = &error
        && data.code.0 == URL_ELICITATION_REQUIRED
    {
        let asked = data.data.as_ref().and_then(|d| d.get("elicitations")).cloned().unwrap_or_default();
        let pages = serde_json::from_value::<Vec<ElicitRequestParams>>(asked)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|asked| match asked {
                ElicitRequestParams::UrlElicitationParams { message, url, .. } => Some((message, url)),
                _ => None,
            })
            .collect::<Vec<_>>();
        if !pages.is_empty() {
            return Failure::PagesFirst { message: data.message.to_string(), pages };
        }
    }
    Failure::Error(call_error(error))
}

fn call_error(error: ServiceError) -> McpError {
    if let Some(challenge) = error.auth_challenge() {
        return McpError::SignIn { challenge: challenge.to_owned() };
    }
    match error {
        ServiceError::McpError(data) => McpError::Refused(data.message.into_owned()),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => McpError::Closed,
        ServiceError::Timeout { timeout } => McpError::Silent(timeout),
        ServiceError::Cancelled { .. } => McpError::Cancelled,
        other => McpError::Request(other.to_string()),
    }
}
