//! Probes of the machine the measurements run on: what the OS says about it (its name,
//! the cores and memory this process may use, the sizes of its data caches), and what
//! only a measurement shows (each core's speed state, how much a busy core slows its
//! neighbour).
//!
//! | module | what lives there |
//! |---|---|
//! | [`system`](mod@system) | [`hostname`], [`available_cores`], [`available_memory`], [`launcher_rank`] |
//! | [`caches`](mod@caches) | [`cache_sizes`], [`cache_bytes`], [`last_level_cache_bytes`] |
//! | [`states`] | each core's speed state, sampled on a pinned thread per core |
//! | [`neighbour`] | the host check: the speed of a block alone and next to a busy core |

pub mod caches;
pub mod neighbour;
pub mod states;
pub mod system;

pub use caches::{cache_bytes, cache_sizes, last_level_cache_bytes};
pub use system::{
    available_cores, available_memory, config_home, hostname, launcher_rank, machine_file,
};
