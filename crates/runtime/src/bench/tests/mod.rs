//! Tests of the unit performance tests through [`KernelSampler`]: a block alone and
//! next to siblings, as a stage of a pipeline, and as a block of a pool's `seq`. They sit
//! above every file of the harness, so that none of those imports the sampler back.
//!
//! [`KernelSampler`]: super::kernel_sampler::KernelSampler

mod kernel;
mod replica;
mod stage;
