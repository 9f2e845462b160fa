//! `fill-mirror DIR [N]`: fills the mirror in DIR with N (default 10,000) pending Gmail drafts
//! through core's store API, for `scripts/measure-desktop.sh` to time the app's first painted
//! queue row and read its memory on a large queue.

use anyhow::{Context, Result};
use countersign_core::Store;
use countersign_e2e::fixture::fill_mirror;

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().context("usage: fill-mirror DIR [N]")?;
    let count: usize = match args.next() {
        Some(n) => n.parse().context("N must be a number")?,
        None => 10_000,
    };
    let store = Store::open(std::path::Path::new(&dir))
        .await
        .context("cannot open the mirror")?;
    fill_mirror(&store, count).await?;
    println!("filled {dir} with {count} drafts");
    Ok(())
}
