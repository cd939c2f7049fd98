//! `perfcompose demo` (being built; see the open issues).

/// Flags of `perfcompose demo`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose demo` is not implemented yet")
}
