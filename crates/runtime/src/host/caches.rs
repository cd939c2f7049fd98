//! The sizes of this CPU's data and unified caches (Linux sysfs), read once per process.

/// Size of the largest CPU cache (Linux sysfs), or 32 MiB where it cannot be read.
pub fn last_level_cache_bytes() -> u64 {
    caches()
        .into_iter()
        .map(|(_, b)| b)
        .max()
        .unwrap_or(32 << 20)
}

/// Size of this CPU's data or unified cache of `level` (Linux sysfs).
pub fn cache_bytes(level: u32) -> Option<u64> {
    caches()
        .into_iter()
        .filter(|(l, _)| *l == level)
        .map(|(_, b)| b)
        .max()
}

/// The sizes of this CPU's data and unified caches in bytes, smallest first, one per
/// level (Linux sysfs; empty where it says nothing).
pub fn cache_sizes() -> Vec<u64> {
    let mut levels: Vec<(u32, u64)> = caches();
    levels.sort_unstable();
    levels.dedup_by_key(|(l, _)| *l);
    levels.into_iter().map(|(_, b)| b).collect()
}

/// `(level, bytes)` of cpu0's data and unified caches, read from sysfs once per process
/// (the benchmarks ask for every repetition).
fn caches() -> Vec<(u32, u64)> {
    static CACHES: std::sync::OnceLock<Vec<(u32, u64)>> = std::sync::OnceLock::new();
    CACHES.get_or_init(read_caches).clone()
}

fn read_caches() -> Vec<(u32, u64)> {
    let parse = |s: &str| -> Option<u64> {
        let s = s.trim();
        let (num, mult) = match s.chars().last()? {
            'K' => (&s[..s.len() - 1], 1u64 << 10),
            'M' => (&s[..s.len() - 1], 1 << 20),
            'G' => (&s[..s.len() - 1], 1 << 30),
            _ => (s, 1),
        };
        num.parse::<u64>().ok().map(|v| v * mult)
    };
    let read = |i: usize, f: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/index{i}/{f}")).ok()
    };
    (0..8)
        .filter_map(|i| {
            let kind = read(i, "type")?;
            if kind.trim() == "Instruction" {
                return None;
            }
            let level = read(i, "level")?.trim().parse().ok()?;
            Some((level, parse(&read(i, "size")?)?))
        })
        .collect()
}
