//! `countersign-fakes`: serve the fake Gmail and the fake muster until killed.
//!
//! Prints one JSON line on stdout once both listen:
//! `{"gmail":{"baseUrl","apiBase","tokeninfoUrl","clientSecret":{…}},"muster":{"url","password"}}`
//! (DESIGN §8), so scripts and black-box tests can read where to connect.

use std::net::SocketAddr;

use clap::Parser;
use countersign_fakes::gmail::{FakeGmail, GmailConfig};
use countersign_fakes::muster::{FakeMuster, MusterConfig};
use countersign_fakes::Seed;

/// Faithful loopback fakes of Gmail (with OAuth) and muster.
#[derive(Parser, Debug)]
#[command(name = "countersign-fakes", version)]
struct Args {
    /// Address of the fake Gmail (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:0")]
    gmail_addr: SocketAddr,
    /// Address of the fake muster (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:0")]
    muster_addr: SocketAddr,
    /// What the fakes hold at start.
    #[arg(long, value_enum, default_value = "empty")]
    seed: SeedArg,
    /// Gmail per-user quota in units per minute (Gmail's is 15000).
    #[arg(long, default_value_t = 15_000)]
    quota: u32,
    /// The fake Gmail mailbox's address.
    #[arg(long, default_value = "owner@example.com")]
    email: String,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum SeedArg {
    Empty,
    Demo,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let args = Args::parse();
    let seed = match args.seed {
        SeedArg::Empty => Seed::Empty,
        SeedArg::Demo => Seed::Demo,
    };
    let gmail = FakeGmail::start(GmailConfig {
        addr: args.gmail_addr,
        seed,
        quota_units_per_minute: args.quota,
        email: args.email,
        grant_scopes: None,
    })
    .await
    .map_err(|e| anyhow::anyhow!("cannot start the fake Gmail on {}: {e}", args.gmail_addr))?;
    let muster = FakeMuster::start(MusterConfig {
        addr: args.muster_addr,
        seed,
        ..MusterConfig::default()
    })
    .await
    .map_err(|e| anyhow::anyhow!("cannot start the fake muster on {}: {e}", args.muster_addr))?;
    let line = serde_json::json!({
        "gmail": {
            "baseUrl": gmail.base_url(),
            "apiBase": gmail.api_base(),
            "tokeninfoUrl": gmail.tokeninfo_url(),
            "clientSecret": gmail.client_secret_json(),
        },
        "muster": {
            "url": muster.url(),
            "password": muster.password(),
        },
    });
    println!("{line}");
    tokio::signal::ctrl_c().await?;
    Ok(())
}
