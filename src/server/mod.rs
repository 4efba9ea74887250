//! The MCP side: the rmcp handler, the endpoint tools, and the stdio and
//! streamable-HTTP transports, both screening frames the same way.

pub mod handler;
pub mod http;
pub mod instructions;
pub mod screen;
pub mod stdio;
pub mod tools;

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::protocol::router::Router;

use handler::DongleServer;
use stdio::ScreenedTransport;

/// Serves MCP over stdin/stdout until the client closes stdin or the
/// process is asked to stop. Every answer queued is written before return.
pub async fn serve_stdio(router: Arc<Router>) -> std::io::Result<()> {
    let limits = *router.limits();
    let (transport, writer) = ScreenedTransport::new(tokio::io::stdin(), std::io::stdout(), limits);
    let service = DongleServer::new(router)
        .serve(transport)
        .await
        .map_err(|e| std::io::Error::other(format!("MCP initialisation failed: {e}")))?;
    let cancel = service.cancellation_token();
    let stop = tokio::spawn(async move {
        shutdown_signal().await;
        cancel.cancel();
    });
    let _ = service.waiting().await;
    stop.abort();
    let _ = writer.await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
