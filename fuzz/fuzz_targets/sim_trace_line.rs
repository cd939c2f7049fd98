//! One trace line, in SimGrid's current form (`0 send 1 0 1e6`) or dPerf's older form
//! (`p0 Isend p1 8429748`), never panics the line parser: errors point at a column of the
//! line (or just past its end, where a missing argument would go), and accepted actions
//! name ranks of the trace and carry finite, non-negative amounts (a receive's size may be
//! -1, "from the sender"). Every input is parsed for 1 and 8 ranks, with dPerf compute
//! amounts read as flops and as nanoseconds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_sim::trace::{parse_line, Action, LegacyCompute, ReaderOptions, TraceError};

fn amount(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

fn check(a: &Action, ranks: u32) {
    let ok = match *a {
        Action::Init
        | Action::Finalize
        | Action::WaitAll
        | Action::WaitLast
        | Action::Barrier
        | Action::NoOp => true,
        Action::Compute { flops } => amount(flops),
        Action::Sleep { seconds } => amount(seconds),
        Action::Send { dst, bytes, .. } | Action::Isend { dst, bytes, .. } => {
            dst < ranks && amount(bytes)
        }
        Action::Recv { src, bytes, .. } | Action::Irecv { src, bytes, .. } => {
            src < ranks && (amount(bytes) || bytes == -1.0)
        }
        Action::Wait { src, dst, .. } | Action::Test { src, dst, .. } => {
            src < ranks && dst < ranks
        }
        Action::SendRecv {
            send_bytes,
            dst,
            recv_bytes,
            src,
        } => dst < ranks && src < ranks && amount(send_bytes) && amount(recv_bytes),
        Action::Bcast { bytes, root } => root < ranks && amount(bytes),
        Action::Reduce {
            bytes,
            flops,
            root,
            dt,
        } => root < ranks && amount(bytes) && amount(flops) && amount(dt) && dt > 0.0,
        Action::AllReduce { bytes, flops, dt } => {
            amount(bytes) && amount(flops) && amount(dt) && dt > 0.0
        }
        Action::AllToAll {
            send_bytes,
            recv_bytes,
        }
        | Action::AllGather {
            send_bytes,
            recv_bytes,
        } => amount(send_bytes) && amount(recv_bytes),
        Action::Gather {
            send_bytes,
            recv_bytes,
            root,
        }
        | Action::Scatter {
            send_bytes,
            recv_bytes,
            root,
        } => root < ranks && amount(send_bytes) && amount(recv_bytes),
    };
    assert!(ok, "{a:?} with {ranks} ranks");
}

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    for ranks in [1u32, 8] {
        for legacy_compute in [LegacyCompute::Flops, LegacyCompute::Nanoseconds] {
            let opts = ReaderOptions {
                legacy_compute,
                ..ReaderOptions::default()
            };
            let mut defaults = vec![1.0; ranks as usize];
            match parse_line(line, opts, &mut defaults, ranks) {
                Ok((rank, action)) => {
                    assert!(rank < ranks);
                    check(&action, ranks);
                    assert!(defaults.iter().all(|&d| d == 1.0 || d == 8.0));
                }
                Err((col, message, hint)) => {
                    assert!(col >= 1 && col <= line.len() + 2, "column {col}: {message}");
                    let e = TraceError {
                        file: "fuzz".into(),
                        line: 1,
                        col,
                        rank: None,
                        message,
                        line_text: line.trim_end().to_string(),
                        hint,
                    };
                    let _ = e.to_string();
                }
            }
        }
    }
});
