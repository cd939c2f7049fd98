//! The common lines of SimGrid's current form parsed straight from the read buffer, in one
//! pass; anything unusual is left to [`parse_line`](super::parse::parse_line).

use super::action::{datatype_size, Action};

/// Most tokens [`parse_fast`] handles (`R isend DST TAG COUNT DT`).
const FAST_FIELDS: usize = 6;
/// Longest all-digit token read as an integer (exact in an f64, fits an i32/u32 at 9).
const FAST_DIGITS: usize = 15;

/// The common lines of SimGrid's current form — `compute`, `send`/`isend`,
/// `recv`/`irecv`, `wait`/`test`, `waitall`, `barrier`, `sleep`, `init`, `finalize` — parsed
/// straight from the read buffer `buf`, in one pass: `(line length with its newline, rank,
/// action)`. `None` means "not sure" (no whole line in `buf`, another action, a token that
/// is not plain, a value out of range): the caller then reads the line and runs
/// [`parse_line`](super::parse::parse_line), which has the last word on every line and
/// gives the errors. Whenever this returns an action, it is the one `parse_line` returns (a
/// property test checks it): reading was half of the replay time on traces whose network
/// sharing is cheap.
pub(super) fn parse_fast(
    buf: &[u8],
    defaults: &mut [f64],
    ranks: u32,
) -> Option<(usize, u32, Action)> {
    if !buf.first()?.is_ascii_digit() {
        return None; // blank, comment, dPerf form, leading space: general path
    }
    // Tokens as (start, end), split on the separators `parse_line` splits on; a control
    // or non-ASCII byte anywhere sends the line to the general path.
    let mut toks = [(0u32, 0u32); FAST_FIELDS];
    let mut n = 0;
    let mut i = 0;
    let len = loop {
        while i < buf.len() && matches!(buf[i], b' ' | b'\t' | b'\r') {
            i += 1;
        }
        match buf.get(i) {
            None => return None, // the line goes on past the buffer
            Some(b'\n') => break i + 1,
            Some(_) => {}
        }
        let start = i;
        while i < buf.len() && buf[i] > b' ' && buf[i] < 0x7f {
            i += 1;
        }
        if i < buf.len() && !matches!(buf[i], b' ' | b'\t' | b'\r' | b'\n') {
            return None;
        }
        if n == FAST_FIELDS {
            return None;
        }
        toks[n] = (start as u32, i as u32);
        n += 1;
    };
    let tok = |k: usize| -> &[u8] { &buf[toks[k].0 as usize..toks[k].1 as usize] };
    let digits = |t: &[u8], max: usize| -> Option<u64> {
        if t.len() > max {
            return None;
        }
        let mut v = 0u64;
        for &b in t {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        Some(v)
    };
    let rank_of = |t: &[u8]| -> Option<u32> {
        let r = digits(t, 9)? as u32;
        (r < ranks).then_some(r)
    };
    let tag_of = |t: &[u8]| -> Option<i32> { Some(digits(t, 9)? as i32) };
    // A non-negative number: integers exactly (an integer below 2^53 is what `str::parse`
    // gives too), anything else through `str::parse` as `parse_line` does.
    let nonneg = |t: &[u8]| -> Option<f64> {
        let v = match digits(t, FAST_DIGITS) {
            Some(v) => v as f64,
            None => std::str::from_utf8(t).ok()?.parse::<f64>().ok()?,
        };
        (v.is_finite() && v >= 0.0).then_some(v)
    };
    if n < 2 {
        return None;
    }
    let rank = rank_of(tok(0))?;
    let d = defaults[rank as usize];
    let dt = |k: usize| -> Option<f64> {
        if k < n {
            datatype_size(std::str::from_utf8(tok(k)).ok()?)
        } else {
            Some(d)
        }
    };
    let name = tok(1);
    let action = match (name, n) {
        (b"compute", 3) => Action::Compute {
            flops: nonneg(tok(2))?,
        },
        (b"isend" | b"send", 5 | 6) => {
            let dst = rank_of(tok(2))?;
            let tag = tag_of(tok(3))?;
            let bytes = Some(nonneg(tok(4))?.trunc() * dt(5)?).filter(|b| b.is_finite())?;
            if name == b"send" {
                Action::Send { dst, tag, bytes }
            } else {
                Action::Isend { dst, tag, bytes }
            }
        }
        (b"irecv" | b"recv", 5 | 6) => {
            let src = rank_of(tok(2))?;
            let tag = tag_of(tok(3))?;
            let bytes = Some(nonneg(tok(4))?.trunc() * dt(5)?).filter(|b| b.is_finite())?;
            if name == b"recv" {
                Action::Recv { src, tag, bytes }
            } else {
                Action::Irecv { src, tag, bytes }
            }
        }
        (b"waitall", 2) => Action::WaitAll,
        (b"wait" | b"test", 5) => {
            let src = rank_of(tok(2))?;
            let dst = rank_of(tok(3))?;
            let tag = tag_of(tok(4))?;
            if name == b"wait" {
                Action::Wait { src, dst, tag }
            } else {
                Action::Test { src, dst, tag }
            }
        }
        (b"sleep", 3) => Action::Sleep {
            seconds: nonneg(tok(2))?,
        },
        (b"barrier", 2) => Action::Barrier,
        (b"finalize", 2) => Action::Finalize,
        (b"init", 2) => {
            defaults[rank as usize] = 1.0;
            Action::Init
        }
        _ => return None,
    };
    Some((len, rank, action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::options::ReaderOptions;
    use crate::trace::parse::{parse_line, ParseFail};

    fn parse(l: &str) -> Result<(u32, Action), ParseFail> {
        let mut d = vec![1.0; 8];
        parse_line(l, ReaderOptions::default(), &mut d, 8)
    }

    #[test]
    fn message_sizes_out_of_range_are_an_error() {
        // 1e308 elements of 16 bytes used to make a message of infinite size.
        for l in [
            "0 send 1 0 1e308 14",
            "0 irecv 1 0 1e308 14",
            "0 sendRecv 1 1 1e308 1 6 14",
            "0 bcast 1e308 0 14",
            "0 reduce 1e308 0 0 14",
            "0 allreduce 1e308 0 14",
            "0 alltoall 1 1e308 6 14",
            "0 gather 1e308 1 0 14 6",
            "0 allgather 1 1e308 6 14",
        ] {
            let e = parse(l).unwrap_err();
            assert!(e.1.contains("too many bytes"), "{l}: {}", e.1);
            assert_eq!(&l[e.0 - 1..e.0 + 4], "1e308", "{l}");
        }
        // the fast path leaves such a line to `parse_line`
        let mut d = vec![1.0; 2];
        assert!(parse_fast(b"0 send 1 0 1e308 14\n", &mut d, 2).is_none());
        assert!(parse_fast(b"0 send 1 0 1e300 14\n", &mut d, 2).is_some());
    }

    proptest::proptest! {
        // Many cases: a line must draw a valid shape to exercise the fast path at all.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8192))]
        /// Whenever the fast parser answers, it answers what `parse_line` does (same
        /// action, same datatype default afterwards); lines drawn near the accepted shapes.
        #[test]
        fn fast_parse_agrees_with_parse_line(
            rank in "[0-9]{1,2}|0[0-9]|p1| 1",
            name in "compute|sleep|send|isend|recv|irecv|wait|test|waitall|barrier|finalize|init|bcast|Send",
            args in proptest::collection::vec(proptest::prop_oneof![
                6 => "[0-3]",
                2 => "[0-9]{1,3}|2\\.5|1e6|3\\.75",
                1 => "[0-9]{9,17}|-1|-0|\\+2|0x1|[a-z]{1,2}|[0-9]{1,2}\\.|0[0-9]|6[01]",
            ], 0..7),
            seps in proptest::collection::vec(" |  |\t", 8),
            end in "|\n|\r\n| \n",
            before in 1.0f64..9.0,
        ) {
            let mut line = format!("{rank}{}{name}", seps[0]);
            for (i, a) in args.iter().enumerate() {
                line.push_str(&seps[i + 1]);
                line.push_str(a);
            }
            line.push_str(&end);
            let mut d_fast = vec![before; 4];
            let mut d_slow = vec![before; 4];
            // the read buffer holds this line and the start of the next one
            let buf = format!("{line}0 compute 1");
            if let Some((len, rank, action)) = parse_fast(buf.as_bytes(), &mut d_fast, 4) {
                proptest::prop_assert_eq!(len, line.len(), "line {:?}", line);
                let slow = parse_line(&line, ReaderOptions::default(), &mut d_slow, 4);
                proptest::prop_assert_eq!(Ok((rank, action)), slow.map_err(|e| e.1), "line {:?}", line);
                proptest::prop_assert_eq!(d_fast, d_slow);
            }
        }
    }
}
