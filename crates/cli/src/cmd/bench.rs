//! `perfcompose bench` (being built; see the open issues).

/// Flags of `perfcompose bench`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose bench` is not implemented yet")
}
