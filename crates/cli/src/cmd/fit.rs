//! `perfcompose fit` (being built; see the open issues).

/// Flags of `perfcompose fit`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose fit` is not implemented yet")
}
