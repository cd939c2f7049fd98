//! A shared trace held in memory (any mix of both forms, any bytes) read to its end never
//! panics: the rank scan, the streaming reader with its fast path for common lines, and the
//! bounded look-ahead give errors or actions, and every action read is the one
//! `parse_line` gives for its line. Every input is read as `perfcompose simulate` reads a
//! trace (ranks from the scan, the default window), and with 2 ranks, a window of 2 and
//! dPerf compute amounts read as nanoseconds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_sim::trace::{parse_line, Action, LegacyCompute, ReaderOptions, TraceSet};

/// Most ranks for which the expected actions are worked out line by line.
const CHECKED_RANKS: u32 = 1 << 16;

/// What `parse_line` gives for each line (by 0-based line number), parsing in file order
/// as the reader does; `None` from the first line that is not UTF-8 on (the reader stops
/// there).
fn expected(data: &[u8], opts: ReaderOptions, ranks: u32) -> Vec<Option<(u32, Action)>> {
    let mut defaults = vec![1.0; ranks as usize];
    let mut out = Vec::new();
    for raw in data.split_inclusive(|&b| b == b'\n') {
        let Ok(line) = std::str::from_utf8(raw) else {
            break;
        };
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            out.push(None);
            continue;
        }
        out.push(parse_line(line, opts, &mut defaults, ranks).ok());
    }
    out
}

fn read(data: &[u8], np: Option<u32>, opts: ReaderOptions) {
    let set = match TraceSet::from_bytes("fuzz", data, np) {
        Ok(s) => s,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    assert!(set.is_shared());
    let ranks = set.ranks();
    let mut reader = match set.reader(opts) {
        Ok(r) => r,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let want = (ranks <= CHECKED_RANKS).then(|| expected(data, opts, ranks));
    // Round robin over the ranks that have actions left, as the replay asks for them.
    let mut active: Vec<u32> = (0..ranks).collect();
    while !active.is_empty() {
        let mut k = 0;
        while k < active.len() {
            let rank = active[k];
            match reader.next(rank) {
                Ok(Some(loc)) => {
                    assert_eq!(loc.file, 0);
                    if let Some(want) = &want {
                        let line = loc.line as usize;
                        assert!(line >= 1);
                        let got = Some((rank, loc.action));
                        assert_eq!(want.get(line - 1), Some(&got), "line {line}");
                    }
                    k += 1;
                }
                Ok(None) => {
                    active.swap_remove(k);
                }
                Err(e) => {
                    let _ = e.to_string();
                    return;
                }
            }
        }
    }
    assert!(reader.bytes_read() <= data.len() as u64);
}

fuzz_target!(|data: &[u8]| {
    read(data, None, ReaderOptions::default());
    read(
        data,
        Some(2),
        ReaderOptions {
            window: 2,
            legacy_compute: LegacyCompute::Nanoseconds,
        },
    );
});
