//! One trace line, in SimGrid's current form or dPerf's older form, parsed with errors that
//! carry the column of the offending token.

use super::action::{datatype_size, Action};
use super::options::{LegacyCompute, ReaderOptions};

pub(super) type ParseFail = (usize, String, Option<String>);

/// `0`, `12` (SimGrid) or `p0`, `p12` (dPerf / MSG).
pub(super) fn parse_rank_token(tok: &str) -> Option<u32> {
    let digits = tok.strip_prefix('p').unwrap_or(tok);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 9 {
        return None;
    }
    digits.parse().ok()
}

/// Most fields on one action line (the longest supported action has 8).
const MAX_FIELDS: usize = 16;

/// Parse one trace line. Errors carry the 1-based column of the offending token.
pub fn parse_line(
    line: &str,
    opts: ReaderOptions,
    defaults: &mut [f64],
    ranks: u32,
) -> Result<(u32, Action), ParseFail> {
    // Tokens with their columns, on the stack: a line is parsed per action, so an
    // allocation here showed up in profiles.
    let mut buf: [(usize, &str); MAX_FIELDS] = [(0, ""); MAX_FIELDS];
    let mut ntok = 0;
    let mut i = 0;
    let b = line.as_bytes();
    let is_space = |c: u8| c == b' ' || c == b'\t' || c == b'\r' || c == b'\n';
    while i < b.len() {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        let s = i;
        while i < b.len() && !is_space(b[i]) {
            i += 1;
        }
        if i > s {
            if ntok == MAX_FIELDS {
                return Err((
                    s + 1,
                    format!("more than {MAX_FIELDS} fields on one line"),
                    None,
                ));
            }
            buf[ntok] = (s + 1, &line[s..i]);
            ntok += 1;
        }
    }
    let toks = &buf[..ntok];
    let line_end = line.trim_end().len() + 1;
    let Some(&(rcol, rtok)) = toks.first() else {
        return Err((1, "empty action line".into(), None));
    };
    let legacy = rtok.starts_with('p');
    let rank = parse_rank_token(rtok).ok_or_else(|| {
        (
            rcol,
            format!("'{rtok}' is not a rank id"),
            Some(
                "each line starts with the rank: `0 compute 1e9` or `p0 compute 5385`".to_string(),
            ),
        )
    })?;
    if rank >= ranks {
        return Err((
            rcol,
            format!("rank {rank} is out of range (the trace has {ranks} ranks)"),
            None,
        ));
    }
    let Some(&(acol, name)) = toks.get(1) else {
        return Err((line_end, "missing action name after the rank".into(), None));
    };
    let args = &toks[2..];
    let need = |n: usize, usage: &str| -> Result<(), ParseFail> {
        if args.len() < n {
            let col = args
                .last()
                .map_or(acol + name.len() + 1, |(c, t)| c + t.len() + 1);
            Err((
                col,
                format!("'{name}' needs {n} argument(s), got {}", args.len()),
                Some(format!("usage: {usage}")),
            ))
        } else {
            Ok(())
        }
    };
    let num = |k: usize| -> Result<f64, ParseFail> {
        let (c, t) = args[k];
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err((c, format!("'{t}' is not a number"), None)),
        }
    };
    let nonneg = |k: usize| -> Result<f64, ParseFail> {
        let v = num(k)?;
        if v < 0.0 {
            Err((
                args[k].0,
                format!("'{}' must not be negative", args[k].1),
                None,
            ))
        } else {
            Ok(v)
        }
    };
    let peer = |k: usize| -> Result<u32, ParseFail> {
        let (c, t) = args[k];
        let r = if legacy {
            parse_rank_token(t)
        } else {
            t.parse::<u32>().ok()
        };
        match r {
            Some(r) if r < ranks => Ok(r),
            Some(r) => Err((
                c,
                format!("rank {r} is out of range (the trace has {ranks} ranks)"),
                None,
            )),
            None => Err((c, format!("'{t}' is not a rank"), None)),
        }
    };
    let int = |k: usize| -> Result<i32, ParseFail> {
        let (c, t) = args[k];
        t.parse::<i32>()
            .map_err(|_| (c, format!("'{t}' is not a whole number"), None))
    };
    let dt = |k: usize, default: f64| -> Result<f64, ParseFail> {
        match args.get(k) {
            None => Ok(default),
            Some(&(c, t)) => datatype_size(t).ok_or_else(|| {
                (
                    c,
                    format!("unknown datatype id '{t}'"),
                    Some("SimGrid's ids: 0 double, 1 int, 2 char, 6 byte, ...".into()),
                )
            }),
        }
    };
    // A size in bytes from the element count in argument `k`: finite (a huge count of
    // 16-byte elements is not).
    let sized = |k: usize, bytes: f64| -> Result<f64, ParseFail> {
        if bytes.is_finite() {
            Ok(bytes)
        } else {
            Err((
                args[k].0,
                format!("{} elements are too many bytes", args[k].1),
                None,
            ))
        }
    };
    let root = |k: usize| -> Result<u32, ParseFail> {
        if args.len() > k {
            peer(k)
        } else {
            Ok(0)
        }
    };
    let d = defaults[rank as usize];
    if legacy {
        let action = match name {
            "init" => Action::Init,
            "finalize" => Action::Finalize,
            "compute" => {
                need(1, "pN compute AMOUNT")?;
                let v = nonneg(0)?;
                match opts.legacy_compute {
                    LegacyCompute::Flops => Action::Compute { flops: v },
                    LegacyCompute::Nanoseconds => Action::Sleep { seconds: v * 1e-9 },
                }
            }
            "sleep" => {
                need(1, "pN sleep SECONDS")?;
                Action::Sleep { seconds: nonneg(0)? }
            }
            "send" | "Isend" | "isend" => {
                need(2, "pN send pM BYTES")?;
                let dst = peer(0)?;
                let bytes = nonneg(1)?;
                if name == "send" {
                    Action::Send { dst, tag: 0, bytes }
                } else {
                    Action::Isend { dst, tag: 0, bytes }
                }
            }
            "recv" | "Recv" | "Irecv" | "irecv" => {
                need(1, "pN recv pM")?;
                let src = peer(0)?;
                let bytes = if args.len() > 1 { nonneg(1)? } else { -1.0 };
                if name.eq_ignore_ascii_case("recv") {
                    Action::Recv { src, tag: 0, bytes }
                } else {
                    Action::Irecv { src, tag: 0, bytes }
                }
            }
            "wait" => Action::WaitLast,
            "barrier" => Action::Barrier,
            "bcast" => {
                need(1, "pN bcast BYTES")?;
                Action::Bcast { bytes: nonneg(0)?, root: 0 }
            }
            "reduce" => {
                need(2, "pN reduce BYTES FLOPS")?;
                Action::Reduce { bytes: nonneg(0)?, flops: nonneg(1)?, root: 0, dt: 1.0 }
            }
            "allReduce" | "allreduce" => {
                need(2, "pN allReduce BYTES FLOPS")?;
                Action::AllReduce { bytes: nonneg(0)?, flops: nonneg(1)?, dt: 1.0 }
            }
            "comm_size" | "comm_split" | "comm_dup" => Action::NoOp,
            other => {
                return Err((
                    acol,
                    format!("unknown action '{other}' in dPerf form"),
                    Some("dPerf/MSG actions: init, finalize, compute, sleep, send, Isend, recv, Irecv, wait, barrier, bcast, reduce, allReduce, comm_size".into()),
                ))
            }
        };
        return Ok((rank, action));
    }
    let action = match name {
        "init" => {
            // SimGrid: `init` with an extra argument means MPE traces, counted in doubles.
            defaults[rank as usize] = if args.is_empty() { 1.0 } else { 8.0 };
            Action::Init
        }
        "finalize" => Action::Finalize,
        "comm_size" | "comm_split" | "comm_dup" | "location" => Action::NoOp,
        "compute" => {
            need(1, "R compute FLOPS")?;
            Action::Compute { flops: nonneg(0)? }
        }
        "sleep" => {
            need(1, "R sleep SECONDS")?;
            Action::Sleep { seconds: nonneg(0)? }
        }
        "send" | "isend" => {
            need(3, "R send DST TAG COUNT [DATATYPE]")?;
            let dst = peer(0)?;
            let tag = int(1)?;
            let bytes = sized(2, nonneg(2)?.trunc() * dt(3, d)?)?;
            if name == "send" {
                Action::Send { dst, tag, bytes }
            } else {
                Action::Isend { dst, tag, bytes }
            }
        }
        "recv" | "irecv" => {
            need(3, "R recv SRC TAG COUNT [DATATYPE]")?;
            let src = peer(0)?;
            let tag = int(1)?;
            let count = num(2)?.trunc();
            let bytes = if count < 0.0 { -1.0 } else { sized(2, count * dt(3, d)?)? };
            if name == "recv" {
                Action::Recv { src, tag, bytes }
            } else {
                Action::Irecv { src, tag, bytes }
            }
        }
        "wait" | "test" => {
            need(3, "R wait SRC DST TAG")?;
            let src = peer(0)?;
            let dst = peer(1)?;
            let tag = int(2)?;
            if name == "wait" {
                Action::Wait { src, dst, tag }
            } else {
                Action::Test { src, dst, tag }
            }
        }
        "waitall" => Action::WaitAll,
        "sendRecv" => {
            need(4, "R sendRecv SENDCOUNT DST RECVCOUNT SRC [DT DT]")?;
            let s = nonneg(0)?.trunc();
            let dst = peer(1)?;
            let r = nonneg(2)?.trunc();
            let src = peer(3)?;
            Action::SendRecv { send_bytes: sized(0, s * dt(4, d)?)?, dst, recv_bytes: sized(2, r * dt(5, d)?)?, src }
        }
        "barrier" => Action::Barrier,
        "bcast" => {
            need(1, "R bcast COUNT [ROOT [DATATYPE]]")?;
            let c = nonneg(0)?.trunc();
            Action::Bcast { bytes: sized(0, c * dt(2, d)?)?, root: root(1)? }
        }
        "reduce" => {
            need(2, "R reduce COUNT FLOPS [ROOT [DATATYPE]]")?;
            let c = nonneg(0)?.trunc();
            let t = dt(3, d)?;
            Action::Reduce { bytes: sized(0, c * t)?, flops: nonneg(1)?, root: root(2)?, dt: t }
        }
        "allreduce" => {
            need(2, "R allreduce COUNT FLOPS [DATATYPE]")?;
            let c = nonneg(0)?.trunc();
            let t = dt(2, d)?;
            Action::AllReduce { bytes: sized(0, c * t)?, flops: nonneg(1)?, dt: t }
        }
        "alltoall" => {
            need(2, "R alltoall SENDCOUNT RECVCOUNT [DT DT]")?;
            let s = nonneg(0)?.trunc();
            let r = nonneg(1)?.trunc();
            Action::AllToAll { send_bytes: sized(0, s * dt(2, d)?)?, recv_bytes: sized(1, r * dt(3, d)?)? }
        }
        "gather" | "scatter" => {
            need(2, "R gather SENDCOUNT RECVCOUNT [ROOT [DT DT]]")?;
            let s = nonneg(0)?.trunc();
            let r = nonneg(1)?.trunc();
            let root = root(2)?;
            let (sb, rb) = (sized(0, s * dt(3, d)?)?, sized(1, r * dt(4, d)?)?);
            if name == "gather" {
                Action::Gather { send_bytes: sb, recv_bytes: rb, root }
            } else {
                Action::Scatter { send_bytes: sb, recv_bytes: rb, root }
            }
        }
        "allgather" => {
            need(2, "R allgather SENDCOUNT RECVCOUNT [DT DT]")?;
            let s = nonneg(0)?.trunc();
            let r = nonneg(1)?.trunc();
            Action::AllGather { send_bytes: sized(0, s * dt(2, d)?)?, recv_bytes: sized(1, r * dt(3, d)?)? }
        }
        "gatherv" | "scatterv" | "allgatherv" | "alltoallv" | "reducescatter" | "scan" | "exscan" => {
            return Err((
                acol,
                format!("action '{name}' is not supported yet"),
                Some("supported collectives: barrier, bcast, reduce, allreduce, alltoall, gather, allgather, scatter".into()),
            ))
        }
        other => {
            return Err((
                acol,
                format!("unknown action '{other}'"),
                Some("SimGrid actions: init, finalize, compute, sleep, send, isend, recv, irecv, wait, waitall, test, sendRecv, barrier, bcast, reduce, allreduce, alltoall, gather, allgather, scatter".into()),
            ))
        }
    };
    Ok((rank, action))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(l: &str) -> Result<(u32, Action), ParseFail> {
        let mut d = vec![1.0; 8];
        parse_line(l, ReaderOptions::default(), &mut d, 8)
    }

    #[test]
    fn current_form_field_orders() {
        assert_eq!(
            parse("0 send 1 7 1e6").unwrap(),
            (
                0,
                Action::Send {
                    dst: 1,
                    tag: 7,
                    bytes: 1e6
                }
            )
        );
        assert_eq!(
            parse("1 irecv 0 7 10 0").unwrap(),
            (
                1,
                Action::Irecv {
                    src: 0,
                    tag: 7,
                    bytes: 80.0
                }
            )
        );
        assert_eq!(
            parse("1 recv 0 0 -1").unwrap(),
            (
                1,
                Action::Recv {
                    src: 0,
                    tag: 0,
                    bytes: -1.0
                }
            )
        );
        assert_eq!(
            parse("2 wait 0 2 5").unwrap(),
            (
                2,
                Action::Wait {
                    src: 0,
                    dst: 2,
                    tag: 5
                }
            )
        );
        assert_eq!(
            parse("3 sendRecv 10 4 20 2").unwrap(),
            (
                3,
                Action::SendRecv {
                    send_bytes: 10.0,
                    dst: 4,
                    recv_bytes: 20.0,
                    src: 2
                }
            )
        );
        assert_eq!(
            parse("0 bcast 100").unwrap(),
            (
                0,
                Action::Bcast {
                    bytes: 100.0,
                    root: 0
                }
            )
        );
        assert_eq!(
            parse("0 bcast 100 3 1").unwrap(),
            (
                0,
                Action::Bcast {
                    bytes: 400.0,
                    root: 3
                }
            )
        );
        assert_eq!(
            parse("0 reduce 10 1e6 2").unwrap(),
            (
                0,
                Action::Reduce {
                    bytes: 10.0,
                    flops: 1e6,
                    root: 2,
                    dt: 1.0
                }
            )
        );
        assert_eq!(
            parse("0 allreduce 10 1e6 0").unwrap(),
            (
                0,
                Action::AllReduce {
                    bytes: 80.0,
                    flops: 1e6,
                    dt: 8.0
                }
            )
        );
        assert_eq!(
            parse("0 gather 68 68 0 0 0").unwrap(),
            (
                0,
                Action::Gather {
                    send_bytes: 544.0,
                    recv_bytes: 544.0,
                    root: 0
                }
            )
        );
        assert_eq!(
            parse("0 alltoall 5 5").unwrap(),
            (
                0,
                Action::AllToAll {
                    send_bytes: 5.0,
                    recv_bytes: 5.0
                }
            )
        );
        assert_eq!(
            parse("0 compute 1e9").unwrap(),
            (0, Action::Compute { flops: 1e9 })
        );
    }

    #[test]
    fn init_with_argument_switches_default_to_double() {
        let mut d = vec![1.0; 2];
        let o = ReaderOptions::default();
        parse_line("0 init 1", o, &mut d, 2).unwrap();
        assert_eq!(
            parse_line("0 send 1 0 10", o, &mut d, 2).unwrap().1,
            Action::Send {
                dst: 1,
                tag: 0,
                bytes: 80.0
            }
        );
        assert_eq!(
            parse_line("1 send 0 0 10", o, &mut d, 2).unwrap().1,
            Action::Send {
                dst: 0,
                tag: 0,
                bytes: 10.0
            }
        );
    }

    #[test]
    fn dperf_form() {
        assert_eq!(
            parse("p0 compute 5385").unwrap(),
            (0, Action::Compute { flops: 5385.0 })
        );
        assert_eq!(
            parse("p0 Isend p1 8429748").unwrap(),
            (
                0,
                Action::Isend {
                    dst: 1,
                    tag: 0,
                    bytes: 8429748.0
                }
            )
        );
        assert_eq!(
            parse("p1 recv p0").unwrap(),
            (
                1,
                Action::Recv {
                    src: 0,
                    tag: 0,
                    bytes: -1.0
                }
            )
        );
        assert_eq!(parse("p1 wait").unwrap(), (1, Action::WaitLast));
        let mut d = vec![1.0; 2];
        let o = ReaderOptions {
            legacy_compute: LegacyCompute::Nanoseconds,
            ..Default::default()
        };
        assert_eq!(
            parse_line("p0 compute 5385", o, &mut d, 2).unwrap().1,
            Action::Sleep { seconds: 5385e-9 }
        );
    }

    #[test]
    fn errors_point_at_the_token() {
        let e = parse("0 send 1 0 abc").unwrap_err();
        assert_eq!(e.0, 12);
        assert!(e.1.contains("'abc' is not a number"));
        let e = parse("0 send 9 0 1").unwrap_err();
        assert!(e.1.contains("out of range"), "{}", e.1);
        let e = parse("0 frobnicate").unwrap_err();
        assert_eq!(e.0, 3);
        let e = parse("0 send 1").unwrap_err();
        assert!(e.1.contains("needs 3"));
        let e = parse("x compute 1").unwrap_err();
        assert_eq!(e.0, 1);
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(s in "[0-9p ]{1,3}[a-zA-Z]{0,10}( [-0-9a-z.e]{0,6}){0,6}") {
            if !s.trim().is_empty() {
                let mut d = vec![1.0; 4];
                let _ = parse_line(&s, ReaderOptions::default(), &mut d, 4);
            }
        }
    }
}
