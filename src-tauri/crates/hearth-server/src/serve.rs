//! The accept loop, bounded: a cap on open connections, a deadline for a request's headers (an
//! idle or half-open connection is closed), a deadline for its body, and a cap on requests
//! waiting for or streaming a reply (the rest get 429 with `Retry-After`). axum's own `serve`
//! has no timer, so a connection that never sends its headers would be held for ever.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::Service;

use crate::error::ApiError;

/// The server's bounds; [`Limits::default`] is what Hearth serves with.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections open at once; past it, new ones wait in the kernel's backlog.
    pub connections: usize,
    /// A request's headers (or the next request on an idle connection), and then its body, must
    /// each arrive within this; a connection that sends nothing is closed after it.
    pub read_timeout: Duration,
    /// Requests waiting for the engine or streaming its reply at once.
    pub queued_requests: usize,
    /// Request bodies up to this size (a conversation of hundreds of thousands of tokens).
    pub max_body: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 512,
            read_timeout: Duration::from_secs(30),
            queued_requests: 64,
            // Half the engine's frame cap (16 MiB, `hearth-engine/src/host/protocol.rs`): a body
            // that passes still fits one frame as a request for the engine (which measures it anyway).
            max_body: 8 << 20,
        }
    }
}

/// Counts the requests in flight against [`Limits::queued_requests`].
#[derive(Clone)]
pub(crate) struct Queue {
    slots: Arc<Semaphore>,
    limits: Limits,
}

/// Held by a request until its reply has ended.
pub(crate) struct QueueSlot(#[allow(dead_code)] OwnedSemaphorePermit);

impl Queue {
    pub fn new(limits: Limits) -> Self {
        Queue { slots: Arc::new(Semaphore::new(limits.queued_requests)), limits }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A slot for one more request, or 429 when every one is taken.
    pub fn enter(&self) -> Result<QueueSlot, ApiError> {
        let permit = Arc::clone(&self.slots).try_acquire_owned().map_err(|_| ApiError::too_many(self.limits.queued_requests))?;
        Ok(QueueSlot(permit))
    }

    /// The request's body, within the size and time bounds.
    pub async fn read_body(&self, body: Body) -> Result<Bytes, ApiError> {
        let limits = self.limits;
        match tokio::time::timeout(limits.read_timeout, axum::body::to_bytes(body, limits.max_body)).await {
            Err(_) => Err(ApiError {
                status: 408,
                ..ApiError::invalid(None, format!("the request body did not arrive within {} s", limits.read_timeout.as_secs_f32()))
            }),
            Ok(Err(e)) if is_too_large(&e) => Err(ApiError {
                status: 413,
                ..ApiError::invalid(None, format!("the request body is larger than {} MiB", limits.max_body >> 20))
            }),
            Ok(Err(e)) => Err(ApiError::invalid(None, format!("the request body could not be read: {e}"))),
            Ok(Ok(bytes)) => Ok(bytes),
        }
    }
}

fn is_too_large(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// Serves `app` on `listener` until `stop` completes: then the listener closes at once and the
/// replies under way finish.
pub(crate) async fn serve_until(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let connections = Arc::new(Semaphore::new(limits.connections));
    let graceful = GracefulShutdown::new();
    // HTTP/1.1 only: telling it from HTTP/2 first reads with no deadline, so a connection that
    // sends nothing would never be closed. (OpenAI's clients speak HTTP/1.1 to a plain http:// URL.)
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.read_timeout);
    let mut stop = pin!(stop);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => permit.expect("never closed"),
            () = &mut stop => break,
        };
        let (tcp, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait rather than spin or end the server.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        // Each event is its own small write: without TCP_NODELAY, Nagle's algorithm holds one back
        // until the client acknowledges the last, and delayed ACKs make that up to 40 ms a time.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set");
        }
        let service = TowerToHyperService::new(ConnectionService { app: app.clone(), remote });
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%remote, error = %e, "connection ended");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The router for one connection: each request learns who sent it ([`ConnectInfo`]).
#[derive(Clone)]
struct ConnectionService {
    app: Router,
    remote: SocketAddr,
}

impl Service<Request<hyper::body::Incoming>> for ConnectionService {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = <Router as Service<Request>>::Future;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Infallible>> {
        <Router as Service<Request>>::poll_ready(&mut self.app, cx)
    }

    fn call(&mut self, request: Request<hyper::body::Incoming>) -> Self::Future {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(self.remote));
        self.app.call(request)
    }
}
