//! `perfcompose check` (being built; see the open issues).

/// Flags of `perfcompose check`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose check` is not implemented yet")
}
