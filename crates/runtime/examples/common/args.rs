//! Shared by the diagnostic examples: positional numbers and kernels named in the
//! environment.

use perfcompose_runtime::kernel::{Op, Registry};

/// The `i`-th command-line argument as a number, `default` if absent or not a number.
pub fn arg(i: usize, default: usize) -> usize {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// The operation of the kernel named in the environment variable `var` (`default` if
/// unset), with its name; an unknown kernel ends the process with status 2.
pub fn kernel_op(registry: &Registry, var: &str, default: &str) -> (String, Op) {
    let name = std::env::var(var).unwrap_or_else(|_| default.into());
    match registry.get(&name) {
        Ok(k) => (name, k.op()),
        Err(e) => {
            eprintln!("{var}={name}: {e}");
            std::process::exit(2);
        }
    }
}
