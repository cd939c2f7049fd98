//! Shared by the diagnostic examples: how long this process's threads waited for a core.

/// Total run-queue wait of this process's threads so far, ns: time they were ready to
/// run while another thread had the core (`/proc/self/task/*/schedstat`, second field;
/// 0 where that file does not exist).
pub fn rq_wait_ns() -> u64 {
    let mut total = 0;
    if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
        for e in dir.flatten() {
            if let Ok(s) = std::fs::read_to_string(e.path().join("schedstat")) {
                total += s
                    .split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    total
}
