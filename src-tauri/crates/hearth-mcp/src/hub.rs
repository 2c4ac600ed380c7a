//! The servers the user added, supervised: each is started the first time it is needed, its state
//! told (starting, ready with its tools, failed with its words and stderr), restarted on demand
//! and stopped at quit. A server that dies is marked failed with how it ended; it is not started
//! again behind the user's back.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;
use ts_rs::TS;

use crate::McpError;
use crate::config::{McpServerConfig, McpTransport};
use crate::connection::{self, CallOptions, Connection, McpTool, ToolOutcome, Trace};
use crate::oauth::{KeptSignIn, SignInKeeper, sign_in_as_client};
use crate::questions::Asker;
use crate::stdio::describe_exit;

/// How long a server may take.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From start to its tools listed (`npx` may fetch a package first).
    pub start: Duration,
    /// How long a crashed server's exit is waited for, to tell how it ended.
    pub exit_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { start: Duration::from_secs(60), exit_grace: Duration::from_millis(500) }
    }
}

/// Where a server stands, as Settings → Tools shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum McpServerState {
    /// Switched off by the user.
    Off,
    /// Not started yet (or stopped): it starts when its tools are first needed.
    Idle,
    Starting,
    Ready {
        tools: Vec<McpTool>,
    },
    /// It asks the user to sign in (OAuth) before it can be used.
    SignIn,
    /// It could not start, or it died: why, and the last lines it wrote to stderr.
    Failed {
        message: String,
        stderr: Vec<String>,
    },
}

/// One server and its state.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct McpServerStatus {
    pub config: McpServerConfig,
    pub state: McpServerState,
}

enum Phase {
    Idle,
    Starting,
    Ready {
        connection: Arc<Connection>,
        trace: Trace,
    },
    /// It asked to sign in, with `challenge` (its `WWW-Authenticate` header).
    SignIn {
        challenge: String,
    },
    /// `by`: the session that died, when one did (a start that failed has none).
    Failed {
        message: String,
        stderr: Vec<String>,
        by: Option<Weak<Connection>>,
    },
}

struct Slot {
    config: McpServerConfig,
    /// Held while the server starts or stops: one start at a time.
    turn: tokio::sync::Mutex<()>,
    phase: Mutex<Phase>,
}

struct Inner {
    slots: Mutex<Vec<Arc<Slot>>>,
    timeouts: Timeouts,
    /// Who asks the user the servers' questions (none: they are declined).
    asker: Mutex<Option<Asker>>,
    /// Where the servers' sign-ins are kept (none: no server is signed in to).
    sign_ins: Mutex<Option<Arc<dyn SignInKeeper>>>,
    /// Bumped at every change of a server's state.
    changed: watch::Sender<u64>,
}

/// The user's MCP servers. Cloning is cheap.
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<Inner>,
}

impl McpHub {
    pub fn new(configs: Vec<McpServerConfig>, timeouts: Timeouts) -> Self {
        let hub = Self {
            inner: Arc::new(Inner {
                slots: Mutex::new(Vec::new()),
                timeouts,
                asker: Mutex::new(None),
                sign_ins: Mutex::new(None),
                changed: watch::channel(0).0,
            }),
        };
        *hub.inner.slots.lock().expect("slots poisoned") = configs.into_iter().map(new_slot).collect();
        hub
    }

    /// Servers started from now on may ask the user questions mid-call (MCP elicitation), through
    /// `asker`.
    pub fn set_asker(&self, asker: Asker) {
        *self.inner.asker.lock().expect("asker poisoned") = Some(asker);
    }

    /// Servers started from now on send the token of the sign-in `keeper` holds for them (if
    /// any), refreshed as it runs out.
    pub fn set_sign_in_keeper(&self, keeper: Arc<dyn SignInKeeper>) {
        *self.inner.sign_ins.lock().expect("sign-ins poisoned") = Some(keeper);
    }

    /// What server `name` asked to sign in with (its `WWW-Authenticate` header), when it asked.
    pub fn sign_in_challenge(&self, name: &str) -> Option<String> {
        let slot = self.slots().into_iter().find(|s| s.config.name == name)?;
        match &*slot.phase.lock().expect("phase poisoned") {
            Phase::SignIn { challenge } => Some(challenge.clone()),
            _ => None,
        }
    }

    /// Told at every change of a server's state (a counter: read [`Self::statuses`] then).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changed.subscribe()
    }

    pub fn statuses(&self) -> Vec<McpServerStatus> {
        self.slots().iter().map(|slot| McpServerStatus { config: slot.config.clone(), state: slot.state() }).collect()
    }

    /// Takes the user's new list: servers whose settings changed or that are gone are stopped;
    /// the others keep running.
    pub async fn set_configs(&self, configs: Vec<McpServerConfig>) {
        let old = self.slots();
        let mut slots = Vec::with_capacity(configs.len());
        for config in configs {
            let kept = old.iter().find(|s| s.config.name == config.name && same_process(&s.config, &config)).cloned();
            slots.push(match kept {
                Some(slot) if slot.config == config => slot,
                Some(slot) => {
                    // Only which tools are on changed: the session goes on.
                    let phase = std::mem::replace(&mut *slot.phase.lock().expect("phase poisoned"), Phase::Idle);
                    Arc::new(Slot { config, turn: tokio::sync::Mutex::new(()), phase: Mutex::new(phase) })
                }
                None => new_slot(config),
            });
        }
        let dropped: Vec<_> = old.into_iter().filter(|s| !slots.iter().any(|n| Arc::ptr_eq(s, n))).collect();
        *self.inner.slots.lock().expect("slots poisoned") = slots;
        for slot in dropped {
            slot.stop().await;
        }
        self.bump();
    }

    /// The server's tools, starting it first if it is not running.
    pub async fn tools(&self, server: &str) -> Result<Vec<McpTool>, McpError> {
        let slot = self.slot(server)?;
        Ok(self.ready(&slot).await?.tools().to_vec())
    }

    /// Starts every server that is on and not running, at once, and waits for them all (and for
    /// those already starting). A server that fails says so in its state; the others are not
    /// held up by it.
    pub async fn start_all(&self) {
        let mut starts = tokio::task::JoinSet::new();
        for slot in self.slots() {
            // One starting already (a restart, another turn) is waited for: its tools are wanted.
            if slot.config.enabled && matches!(slot.state(), McpServerState::Idle | McpServerState::Starting) {
                let hub = self.clone();
                starts.spawn(async move {
                    let _ = hub.ready(&slot).await;
                });
            }
        }
        starts.join_all().await;
    }

    /// Stops the server (if it runs) and starts it again.
    pub async fn restart(&self, server: &str) -> Result<Vec<McpTool>, McpError> {
        let slot = self.slot(server)?;
        slot.stop().await;
        self.bump();
        Ok(self.ready(&slot).await?.tools().to_vec())
    }

    /// Stops the server; it starts again when next needed.
    pub async fn stop(&self, server: &str) -> Result<(), McpError> {
        let slot = self.slot(server)?;
        slot.stop().await;
        self.bump();
        Ok(())
    }

    /// Ends every server's process now, without an async runtime: at quit, from whatever thread
    /// the app exits on (the graceful [`Self::stop_all`] needs the runtime).
    pub fn kill_all_now(&self) {
        for slot in self.slots() {
            if let Phase::Ready { connection, .. } = &*slot.phase.lock().expect("phase poisoned") {
                connection.kill_now();
            }
        }
    }

    /// Stops every server.
    pub async fn stop_all(&self) {
        for slot in self.slots() {
            slot.stop().await;
        }
        self.bump();
    }

    /// Runs `tool` of `server` with `arguments`. The caller has had the user's approval.
    pub async fn call(&self, server: &str, tool: &str, arguments: Value, options: &CallOptions) -> Result<ToolOutcome, McpError> {
        let slot = self.slot(server)?;
        if slot.config.disabled_tools.iter().any(|t| t == tool) {
            return Err(McpError::ToolOff { server: server.into(), tool: tool.into() });
        }
        let connection = self.ready(&slot).await?;
        if !connection.tools().iter().any(|t| t.name == tool) {
            return Err(McpError::UnknownTool { server: server.into(), tool: tool.into() });
        }
        match connection.call(tool, arguments.clone(), options).await {
            Err(McpError::Closed) => Err(self.died(&slot, &connection, "it closed the connection during the call").await),
            // A machine client's token ran out mid-session: it signs in again (as the server
            // starts), and the call is made once more.
            Err(McpError::SignIn { .. }) if self.has_machine_client(server) => {
                tracing::info!(server, "a machine client's token ran out: signing in again");
                slot.stop().await;
                self.bump();
                self.ready(&slot).await?.call(tool, arguments, options).await
            }
            other => other,
        }
    }

    /// Whether the user gave a machine client for `server` (it signs in without them).
    fn has_machine_client(&self, server: &str) -> bool {
        let keeper = self.inner.sign_ins.lock().expect("sign-ins poisoned").clone();
        keeper.is_some_and(|keeper| matches!(keeper.machine_client(server), Ok(Some(_))))
    }

    fn slots(&self) -> Vec<Arc<Slot>> {
        self.inner.slots.lock().expect("slots poisoned").clone()
    }

    fn slot(&self, server: &str) -> Result<Arc<Slot>, McpError> {
        self.slots().into_iter().find(|s| s.config.name == server).ok_or_else(|| McpError::UnknownServer(server.into()))
    }

    fn bump(&self) {
        self.inner.changed.send_modify(|n| *n += 1);
    }

    /// The server's session, started if need be. A failed server stays failed until restarted.
    async fn ready(&self, slot: &Arc<Slot>) -> Result<Arc<Connection>, McpError> {
        if !slot.config.enabled {
            return Err(McpError::Off(slot.config.name.clone()));
        }
        let _turn = slot.turn.lock().await;
        let running = match &*slot.phase.lock().expect("phase poisoned") {
            Phase::Ready { connection, .. } => Some(connection.clone()),
            Phase::Failed { message, .. } => return Err(McpError::Failed { server: slot.config.name.clone(), message: message.clone() }),
            Phase::SignIn { challenge } => return Err(McpError::SignIn { challenge: challenge.clone() }),
            Phase::Idle | Phase::Starting => None,
        };
        if let Some(connection) = running {
            if !connection.is_closed() {
                return Ok(connection);
            }
            return Err(self.died(slot, &connection, "its session ended").await);
        }
        slot.set(Phase::Starting);
        self.bump();
        let mut trace = Trace::default();
        let asker = self.inner.asker.lock().expect("asker poisoned").clone().map(|asker| (slot.config.name.clone(), asker));
        let keeper = self.inner.sign_ins.lock().expect("sign-ins poisoned").clone();
        let name = &slot.config.name;
        let signed_in = keeper.clone().map(|k| KeptSignIn::new(name, k));
        let start = self.inner.timeouts.start;
        let mut started = connection::connect(&slot.config.transport, signed_in, asker.clone(), start, &mut trace).await;
        // A machine client signs in itself, at first and whenever its token runs out.
        if let (Err(McpError::SignIn { .. }), Some(keeper), McpTransport::Http { url, .. }) = (&started, &keeper, &slot.config.transport) {
            match keeper.machine_client(name) {
                Ok(Some(credentials)) => {
                    started = match sign_in_as_client(url, &credentials, Vec::new(), KeptSignIn::new(name, keeper.clone())).await {
                        Ok(_) => {
                            tracing::info!(server = name, "signed in to an MCP server as a machine client");
                            connection::connect(
                                &slot.config.transport,
                                Some(KeptSignIn::new(name, keeper.clone())),
                                asker,
                                start,
                                &mut trace,
                            )
                            .await
                        }
                        Err(error) => Err(error),
                    };
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(server = name, error = %e, "an MCP server's machine client could not be read"),
            }
        }
        let result = match started {
            Ok(connection) => {
                let connection = Arc::new(connection);
                tracing::info!(server = slot.config.name, tools = connection.tools().len(), "MCP server ready");
                slot.set(Phase::Ready { connection: connection.clone(), trace: trace.clone() });
                self.watch_exit(slot, &connection, &trace);
                Ok(connection)
            }
            Err(McpError::SignIn { challenge }) => {
                tracing::info!(server = slot.config.name, "MCP server asks to sign in");
                slot.set(Phase::SignIn { challenge: challenge.clone() });
                Err(McpError::SignIn { challenge })
            }
            Err(error) => {
                let (message, stderr) = words(&error.to_string(), &trace, self.inner.timeouts.exit_grace).await;
                tracing::warn!(server = slot.config.name, "MCP server failed to start: {message}");
                slot.set(Phase::Failed { message: message.clone(), stderr, by: None });
                Err(McpError::Failed { server: slot.config.name.clone(), message })
            }
        };
        self.bump();
        result
    }

    /// A stdio server that ends on its own is marked failed at once, with how it ended.
    fn watch_exit(&self, slot: &Arc<Slot>, connection: &Arc<Connection>, trace: &Trace) {
        let Some(mut ended) = trace.ended.clone() else { return };
        let (hub, slot, connection) = (Arc::downgrade(&self.inner), Arc::downgrade(slot), Arc::downgrade(connection));
        tokio::spawn(async move {
            let _ = ended.wait_for(Option::is_some).await;
            let (Some(inner), Some(slot), Some(connection)) = (hub.upgrade(), slot.upgrade(), connection.upgrade()) else { return };
            McpHub { inner }.died(&slot, &connection, "it stopped").await;
        });
    }

    /// Marks the server failed if `connection` is still its session, and says why.
    async fn died(&self, slot: &Slot, connection: &Arc<Connection>, what: &str) -> McpError {
        let trace = match &*slot.phase.lock().expect("phase poisoned") {
            Phase::Ready { connection: current, trace } if Arc::ptr_eq(current, connection) => trace.clone(),
            // Its end was already noticed (the exit watcher and a call in flight race to it).
            Phase::Failed { message, by: Some(by), .. } if std::ptr::eq(by.as_ptr(), Arc::as_ptr(connection)) => {
                return McpError::Failed { server: slot.config.name.clone(), message: message.clone() };
            }
            // Stopped or restarted meanwhile: that was the user's doing, not a crash.
            _ => return McpError::Closed,
        };
        let (message, stderr) = words(what, &trace, self.inner.timeouts.exit_grace).await;
        tracing::warn!(server = slot.config.name, "MCP server died: {message}");
        slot.set(Phase::Failed { message: message.clone(), stderr, by: Some(Arc::downgrade(connection)) });
        self.bump();
        McpError::Failed { server: slot.config.name.clone(), message }
    }
}

fn new_slot(config: McpServerConfig) -> Arc<Slot> {
    Arc::new(Slot { config, turn: tokio::sync::Mutex::new(()), phase: Mutex::new(Phase::Idle) })
}

/// Two settings that start the same server: only which tools are on may differ.
fn same_process(a: &McpServerConfig, b: &McpServerConfig) -> bool {
    a.transport == b.transport && a.enabled == b.enabled
}

impl Slot {
    fn set(&self, phase: Phase) {
        *self.phase.lock().expect("phase poisoned") = phase;
    }

    fn state(&self) -> McpServerState {
        if !self.config.enabled {
            return McpServerState::Off;
        }
        match &*self.phase.lock().expect("phase poisoned") {
            Phase::Idle => McpServerState::Idle,
            Phase::Starting => McpServerState::Starting,
            Phase::Ready { connection, .. } => McpServerState::Ready { tools: connection.tools().to_vec() },
            Phase::Failed { message, stderr, .. } => McpServerState::Failed { message: message.clone(), stderr: stderr.clone() },
            Phase::SignIn { .. } => McpServerState::SignIn,
        }
    }

    async fn stop(&self) {
        let _turn = self.turn.lock().await;
        let phase = std::mem::replace(&mut *self.phase.lock().expect("phase poisoned"), Phase::Idle);
        if let Phase::Ready { connection, .. } = phase {
            // Calls in flight end with the session.
            connection.close().await;
        }
    }
}

/// A failure in words: what happened, how the process ended (if it did), and what it said —
/// its last stderr line, or the stray output that is not MCP. Also the stderr lines themselves.
async fn words(what: &str, trace: &Trace, grace: Duration) -> (String, Vec<String>) {
    let mut message = what.to_owned();
    if let Some(mut ended) = trace.ended.clone()
        && let Ok(Ok(Some(status))) = tokio::time::timeout(grace, ended.wait_for(Option::is_some)).await.map(|r| r.map(|s| *s))
    {
        message.push_str(&format!("; {}", describe_exit(status)));
    }
    let Some(leftovers) = &trace.leftovers else { return (message, Vec::new()) };
    let leftovers = leftovers.lock().expect("leftovers poisoned").clone();
    if let Some(garbage) = leftovers.garbage.lines().next() {
        message.push_str(&format!("; it wrote what is not MCP on its output: {garbage:?}"));
    }
    if let Some(last) = leftovers.stderr.lines().rev().find(|l| !l.trim().is_empty()) {
        message.push_str(&format!("; its last words: {:?}", last.trim()));
    }
    (message, leftovers.stderr.lines().map(str::to_owned).collect())
}
