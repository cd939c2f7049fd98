//! Sweeps: a kernel, a block under its conditions, or a whole program measured at each
//! size of a sweep, one point after the other with progress, into a [`Series`].

use super::conditions::{Conditions, InputState};
use super::kernel_sampler::{time_kernel_in, KernelSampler};
use super::program_sampler::time_program;
use super::sampling::{sample_point, Progress, Sampling};
use super::series::{PointStats, Series};
use crate::ctx::Config;
use crate::error::Error;
use crate::kernel::{Inputs, Kernel, Registry};
use crate::plan::Plan;

/// Time a kernel over a sweep of sizes, inputs cold.
pub fn bench_kernel(
    kernel: &dyn Kernel,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    bench_kernel_in(
        kernel,
        sizes,
        inputs,
        spec,
        memory_limit,
        InputState::Cold,
        progress,
    )
}

/// Time a kernel over a sweep of sizes under `how` (an [`InputState`] or [`Conditions`]).
pub fn bench_kernel_in(
    kernel: &dyn Kernel,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    how: impl Into<Conditions>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    let how = how.into();
    let points = sweep(kernel.name(), sizes, progress, |x| {
        time_kernel_in(kernel, x, inputs, spec, memory_limit, how.clone())
    })?;
    Ok(Series::kernel(kernel.name(), points))
}

/// Time the block `name` of `registry` over a sweep of sizes under `how`, a pipeline
/// stage's conditions included ([`KernelSampler::for_block`]).
#[allow(clippy::too_many_arguments)]
pub fn bench_block(
    registry: &Registry,
    name: &str,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    how: Conditions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    let kernel = registry.get(name)?;
    let points = sweep(kernel.name(), sizes, progress, |x| {
        let mut s =
            KernelSampler::for_block(registry, name, x, inputs, spec, memory_limit, how.clone())?;
        sample_point(spec, &mut s)
    })?;
    Ok(Series::kernel(kernel.name(), points))
}

/// Measure a plan over a sweep of sizes (whole-program measurement).
#[allow(clippy::too_many_arguments)]
pub fn bench_plan(
    plan: &Plan,
    registry: &Registry,
    config: Config,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    let built = plan.build(registry, config)?;
    let name = plan.to_string();
    let points = sweep(&name, sizes, progress, |x| {
        time_program(&built, registry, x, inputs, spec, memory_limit)
    })?;
    Ok(Series::program(name, points))
}

/// One point per size, with progress under `label`.
fn sweep(
    label: &str,
    sizes: &[usize],
    progress: &mut dyn FnMut(Progress<'_>),
    mut point: impl FnMut(usize) -> Result<PointStats, Error>,
) -> Result<Vec<PointStats>, Error> {
    let mut points = Vec::with_capacity(sizes.len());
    for (i, &x) in sizes.iter().enumerate() {
        progress(Progress {
            label,
            x: x as u64,
            done: i,
            total: sizes.len(),
        });
        points.push(point(x)?);
    }
    Ok(points)
}
