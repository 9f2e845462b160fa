//! A loopback HTTP server for the fakes that can misbehave the way real networks do.
//!
//! `axum::serve` cannot refuse connections on demand or cut one without answering, and those are
//! exactly the failures the outbox must survive, so the accept loop is written here over hyper:
//! - **offline**: the listening socket is closed (connections are *refused*, not reset) and open
//!   keep-alive connections are dropped; going online binds the same address again;
//! - **drop after commit**: a handler that has already changed state marks its response with
//!   [`DropConnection`]; the connection is then closed without a single byte of the answer, so
//!   the client cannot know whether the change happened.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Response extension: close the connection instead of sending this response.
#[derive(Clone, Copy, Debug)]
pub struct DropConnection;

/// Handle on a running fake server: its address and its online switch.
#[derive(Clone, Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    online: Arc<watch::Sender<bool>>,
    stop: Arc<watch::Sender<bool>>,
}

impl ServerHandle {
    /// The bound address (always 127.0.0.1 unless asked otherwise).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Refuse every connection (`false`) or accept them again (`true`).
    pub fn set_online(&self, online: bool) {
        self.online.send_replace(online);
    }

    /// Whether the server currently accepts connections.
    pub fn is_online(&self) -> bool {
        *self.online.borrow()
    }

    /// Wait until the port accepts connections (`listening`) or refuses them: `set_online`
    /// takes effect once the accept loop has seen it, not at once. Probing the port is the
    /// wait; the limit (10 s) only stops a hang.
    pub async fn until_listening(&self, listening: bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while tokio::net::TcpStream::connect(self.addr).await.is_ok() != listening {
            assert!(
                std::time::Instant::now() < deadline,
                "the fake's port never became {}",
                if listening { "open" } else { "closed" }
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Stop serving for good.
    pub fn shutdown(&self) {
        self.stop.send_replace(true);
    }
}

#[derive(Debug)]
struct ConnectionCut;

impl std::fmt::Display for ConnectionCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection cut on purpose by the fake")
    }
}

impl std::error::Error for ConnectionCut {}

/// Bind `addr` and serve `router` until [`ServerHandle::shutdown`].
pub async fn serve(router: Router, addr: SocketAddr) -> std::io::Result<ServerHandle> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (online_tx, online_rx) = watch::channel(true);
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(accept_loop(
        router,
        addr,
        Some(listener),
        online_rx,
        stop_rx,
    ));
    Ok(ServerHandle {
        addr,
        online: Arc::new(online_tx),
        stop: Arc::new(stop_tx),
    })
}

async fn accept_loop(
    router: Router,
    addr: SocketAddr,
    mut listener: Option<TcpListener>,
    mut online: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        if *stop.borrow() {
            return;
        }
        let is_online = *online.borrow_and_update();
        if !is_online {
            // Closing the socket is what makes connect() fail with ECONNREFUSED.
            listener = None;
        } else if listener.is_none() {
            match TcpListener::bind(addr).await {
                Ok(l) => listener = Some(l),
                Err(e) => {
                    tracing::warn!(%addr, error = %e, "fake cannot bind again; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            }
        }
        match &listener {
            Some(l) => {
                tokio::select! {
                    accepted = l.accept() => {
                        if let Ok((stream, _)) = accepted {
                            let _ = stream.set_nodelay(true);
                            tokio::spawn(serve_connection(
                                router.clone(),
                                stream,
                                online.clone(),
                                stop.clone(),
                            ));
                        }
                    }
                    _ = online.changed() => {}
                    _ = stop.changed() => {}
                }
            }
            None => {
                tokio::select! {
                    _ = online.changed() => {}
                    _ = stop.changed() => {}
                }
            }
        }
    }
}

async fn serve_connection(
    router: Router,
    stream: tokio::net::TcpStream,
    mut online: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let router = router.clone();
        async move {
            let response = match tower::ServiceExt::oneshot(router, request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if response.extensions().get::<DropConnection>().is_some() {
                // An error from the service makes hyper close the connection unanswered.
                return Err(ConnectionCut);
            }
            Ok::<_, ConnectionCut>(response)
        }
    });
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = connection => {}
        _ = wait_until_false(&mut online) => {}
        _ = stop.changed() => {}
    }
}

async fn wait_until_false(online: &mut watch::Receiver<bool>) {
    while *online.borrow_and_update() {
        if online.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
