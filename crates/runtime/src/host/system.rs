//! The machine as the OS describes it to this process: its name, the cores it may use,
//! the memory available, and the rank an MPI launcher gave the process.

/// Cores the OS lets this process use.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The variables MPI launchers set to a process's rank in its job: Open MPI's
/// `mpirun`, PMIx launchers (`prterun`, `srun --mpi=pmix`), and MPICH's Hydra (PMI).
const LAUNCHER_RANK: [&str; 3] = ["OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"];

/// This process's rank when an MPI launcher (`mpirun`) started it, from the launcher's
/// environment; `None` for a process started otherwise. Known before MPI is
/// initialised, so that an error every rank hits alike (a bad flag) is printed by rank
/// 0 alone.
pub fn launcher_rank() -> Option<usize> {
    LAUNCHER_RANK
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .and_then(|r| r.trim().parse().ok())
}

/// This machine's name (`/etc/hostname`, `$HOSTNAME`, or `unknown-host`).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// The configuration directory: `$XDG_CONFIG_HOME`, else `~/.config`; `None` without
/// either.
pub fn config_home() -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

/// A file perfcompose keeps for this machine under the configuration directory
/// `config`: `config/perfcompose/KIND-HOST.json`, `HOST` this machine's name with
/// characters other than letters, digits, `-` and `.` as `_`.
pub fn machine_file(config: &std::path::Path, kind: &str) -> std::path::PathBuf {
    let host: String = hostname()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    config
        .join("perfcompose")
        .join(format!("{kind}-{host}.json"))
}

/// Bytes of memory the OS reports available (Linux `MemAvailable`), if it says.
pub fn available_memory() -> Option<u128> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u128>().ok())
        })
        .map(|kb| kb * 1024)
}
