//! What `simulate --trace` names: a time-independent trace (an index or a trace file) or
//! an OTF2 archive (its anchor file, Score-P's `traces.otf2`), which is converted into a
//! time-independent trace in memory when perfcompose is built with the `otf2` feature.
//!
//! An archive is told by its anchor file: a name ending in `.otf2`, or a binary header —
//! the bytes `OTF2` and a control byte among its first eight, which no text trace or index
//! has — so a renamed anchor is still recognised. A directory holding `traces.otf2` (as
//! Score-P's `scorep-*` experiment directories do) names that archive.

use std::io::Read;
use std::path::Path;

use anyhow::bail;
use perfcompose_sim::platform::Platform;
use perfcompose_sim::trace::TraceSet;
use perfcompose_sim::HostId;

/// The traces to replay, and what the user should know about how they were read.
pub struct Opened {
    pub traces: TraceSet,
    pub notes: Vec<String>,
}

/// How an OTF2 archive is converted (`simulate`'s flags).
pub struct Otf2Options<'a> {
    /// `--speed`: the traced machine's speed (SimGrid units), for every rank.
    pub speed: Option<&'a str>,
    /// `--write-trace DIR`: also write the converted trace there.
    pub write_trace: Option<&'a Path>,
}

/// Whether `path` is an OTF2 archive's anchor file.
pub fn is_otf2(path: &Path) -> bool {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("otf2"))
    {
        return true;
    }
    let mut head = [0u8; 8];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let head = &head[..n];
    let binary = head
        .iter()
        .any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'));
    binary && head.windows(4).any(|w| w == b"OTF2")
}

/// Open `--trace`: an OTF2 archive converted at the ranks' speeds (`--speed`, else each
/// rank's host in `slots`), or a time-independent trace as it is.
pub fn open(
    trace: &Path,
    np: Option<u32>,
    otf2: &Otf2Options,
    platform: &Platform,
    slots: &[HostId],
) -> anyhow::Result<Opened> {
    let anchor = trace.join("traces.otf2");
    if trace.is_dir() && anchor.is_file() {
        return open_otf2(&anchor, np, otf2, platform, slots);
    }
    if is_otf2(trace) {
        return open_otf2(trace, np, otf2, platform, slots);
    }
    if otf2.speed.is_some() || otf2.write_trace.is_some() {
        bail!(
            "--speed and --write-trace apply to OTF2 archives; {} is a time-independent trace, whose computation is in flops already",
            trace.display()
        );
    }
    let traces = TraceSet::open(trace, np).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Opened {
        traces,
        notes: Vec::new(),
    })
}

#[cfg(not(feature = "otf2"))]
fn open_otf2(
    trace: &Path,
    _np: Option<u32>,
    _otf2: &Otf2Options,
    _platform: &Platform,
    _slots: &[HostId],
) -> anyhow::Result<Opened> {
    bail!(
        "{} is an OTF2 archive, and this perfcompose was built without OTF2 support\n  \
         = hint: install the OTF2 library (bash scripts/install-otf2), then build with \
         `cargo build --release --features otf2`",
        trace.display()
    )
}

#[cfg(feature = "otf2")]
fn open_otf2(
    trace: &Path,
    np: Option<u32>,
    otf2: &Otf2Options,
    platform: &Platform,
    slots: &[HostId],
) -> anyhow::Result<Opened> {
    use std::sync::Arc;

    use anyhow::Context;
    use perfcompose_sim::units::{parse_quantity, Quantity};

    let given = match otf2.speed {
        Some(s) => {
            let v = parse_quantity(s, Quantity::Speed).map_err(|e| match &e.hint {
                Some(h) => anyhow::anyhow!("--speed '{s}': {}\n  = hint: {h}", e.message),
                None => anyhow::anyhow!("--speed '{s}': {}", e.message),
            })?;
            if !(v.is_finite() && v > 0.0) {
                bail!("--speed '{s}': the speed must be positive, e.g. 2.5Gf");
            }
            Some(v)
        }
        None => None,
    };
    if slots.is_empty() {
        bail!("the platform has no host to deploy ranks on");
    }
    let host_speed = |r: u32| platform.host(slots[r as usize % slots.len()]).speed;
    let speed = |r: u32| given.unwrap_or_else(|| host_speed(r));
    let conv = perfcompose_otf2::convert(trace, &speed)?;
    let ranks = conv.texts.len();
    if let Some(n) = np {
        if n as usize != ranks {
            bail!(
                "--np {n}: the OTF2 archive {} has {ranks} MPI ranks",
                trace.display()
            );
        }
    }
    if let Some(dir) = otf2.write_trace {
        write_trace(dir, &conv.texts)
            .with_context(|| format!("cannot write the converted trace to {}", dir.display()))?;
    }
    let mut notes = vec![match given {
        Some(v) => format!(
            "OTF2 archive {}: {ranks} ranks, {} events converted into {} actions; computation written at {v:e} flop/s (--speed): a host of that speed replays it in the measured time",
            trace.display(),
            conv.events,
            conv.actions
        ),
        None => format!(
            "OTF2 archive {}: {ranks} ranks, {} events converted into {} actions; computation written at each rank's host speed, so this platform replays it in the measured time (give --speed with the traced machine's speed to replay it on faster or slower hosts)",
            trace.display(),
            conv.events,
            conv.actions
        ),
    }];
    notes.extend(conv.notes);
    let texts: Vec<Arc<[u8]>> = conv.texts.into_iter().map(Arc::from).collect();
    let traces =
        TraceSet::from_rank_bytes(conv.names, texts).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Opened { traces, notes })
}

/// `DIR/trace.txt` (the index) and `DIR/trace_R.txt` per rank, as `record` writes them.
#[cfg(feature = "otf2")]
fn write_trace(dir: &Path, texts: &[Vec<u8>]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let mut index = std::io::BufWriter::new(std::fs::File::create(dir.join("trace.txt"))?);
    for (r, text) in texts.iter().enumerate() {
        std::fs::write(dir.join(format!("trace_{r}.txt")), text)?;
        writeln!(index, "trace_{r}.txt")?;
    }
    index.flush()
}
