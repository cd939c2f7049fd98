//! Shared by the diagnostic examples: positional numbers and kernels named in the
//! environment. Each example uses some of them.
#![allow(dead_code)]

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

/// `args[0]` as a comma-separated list of numbers and `args[1]` as a number of
/// repetitions (15 if absent), or a message on standard error and status 2 (`usage`
/// names the arguments).
pub fn list_and_reps<T: std::str::FromStr>(args: &[String], usage: &str) -> (Vec<T>, usize)
where
    T::Err: std::fmt::Display,
{
    let Some(list) = args.first() else {
        eprintln!("usage: {usage}");
        std::process::exit(2);
    };
    let values: Vec<T> = match list.split(',').map(str::parse).collect() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{list:?}: {e}");
            std::process::exit(2);
        }
    };
    let reps = match args.get(1).map(|r| r.parse()) {
        None => 15,
        Some(Ok(r)) if r > 0 => r,
        Some(_) => {
            eprintln!("REPS {:?}: not a positive integer", args[1]);
            std::process::exit(2);
        }
    };
    (values, reps)
}
