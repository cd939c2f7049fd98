//! The machine as the OS describes it to this process: its name, the cores it may use
//! and the memory available.

/// Cores the OS lets this process use.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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
