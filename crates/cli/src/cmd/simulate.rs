//! `perfcompose simulate` (being built; see the open issues).

/// Flags of `perfcompose simulate`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose simulate` is not implemented yet")
}
