//! `perfcompose predict` (being built; see the open issues).

/// Flags of `perfcompose predict`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose predict` is not implemented yet")
}
