//! `perfcompose validate` (being built; see the open issues).

/// Flags of `perfcompose validate`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose validate` is not implemented yet")
}
