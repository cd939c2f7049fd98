//! `perfcompose validate` (being built).

/// Flags of `perfcompose validate`.
#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("`perfcompose validate` is not implemented yet")
}

/// A term as the runtime's plan.
pub fn plan_of(_term: &str) -> anyhow::Result<perfcompose_runtime::Plan> {
    anyhow::bail!("terms are not parsed yet")
}
