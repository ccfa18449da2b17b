//! SIGTERM and SIGINT: the first asks for a graceful shutdown, a second exits at once.

use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// Resolves on the first SIGTERM or SIGINT, then exits the process at once on a second one.
pub async fn shutdown_signal(token: CancellationToken) {
    wait_signal().await;
    info!("signal received: finishing (a second signal exits at once)");
    token.cancel();
    wait_signal().await;
    warn!("second signal: exiting now");
    std::process::exit(130);
}

async fn wait_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
