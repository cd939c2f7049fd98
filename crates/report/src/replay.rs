//! The replay page (`report --simulate FILE`): a replayed trace's per-rank timeline
//! (compute, send, receive, wait, collectives) and per-rank breakdown.
//!
//! FILE is what `simulate --timeline FILE` writes (a Chrome trace whose `otherData.replay`
//! holds the replay's report), or what `simulate --json` prints, which has the breakdown
//! but no timeline. A big replay is aggregated to what a screen can show: at most
//! [`MAX_ROWS`] ranks drawn (evenly spaced), and each rank's time cut into [`BINS`] bins
//! coloured by the activity that took most of the bin; the page says when it did this.

use std::collections::BTreeMap;

use perfcompose_core::diag::{line_offset, Diagnostic, Span as SrcSpan};
use perfcompose_sim::timeline::Activity;
use serde::Deserialize;

use crate::page::{Figure, Page};
use crate::plot::css_color;
use crate::plot::{Bar, Stacked, Timeline};
use crate::Error;

/// Most ranks drawn in the timeline and the breakdown.
pub const MAX_ROWS: usize = 64;
/// Time bins per rank when the spans are too many to draw one by one.
pub const BINS: usize = 600;
/// Most spans drawn one by one.
pub const MAX_EXACT_SPANS: usize = 20_000;

/// An activity's name on the page: `simulate`'s word where it has one (`waiting`
/// for the timeline's `late`), so that the page and the command's report agree.
fn shown(a: Activity) -> &'static str {
    match a {
        Activity::Late => "waiting",
        other => other.name(),
    }
}

/// One rank of the replay's report (`simulate --json`'s `ranks`).
#[derive(Clone, Debug, Deserialize)]
pub struct RankRow {
    pub rank: u32,
    pub host: String,
    pub compute_s: f64,
    pub sleep_s: f64,
    pub communication_s: f64,
    pub waiting_s: f64,
    pub finish_s: f64,
    pub actions: u64,
}

/// The replay's report (the fields of `simulate --json` the page uses).
#[derive(Clone, Debug, Deserialize)]
pub struct Summary {
    pub simulated_time_s: f64,
    pub ranks: Vec<RankRow>,
    #[serde(default)]
    pub actions: u64,
    #[serde(default)]
    pub messages: u64,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Deserialize)]
struct Event {
    name: Option<String>,
    ph: String,
    cat: Option<String>,
    ts: Option<f64>,
    dur: Option<f64>,
    tid: Option<u64>,
}

#[derive(Deserialize)]
struct Other {
    replay: Option<Summary>,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "traceEvents")]
    trace_events: Option<Vec<Event>>,
    #[serde(rename = "otherData")]
    other_data: Option<Other>,
    simulated_time_s: Option<f64>,
    ranks: Option<Vec<RankRow>>,
    #[serde(default)]
    actions: u64,
    #[serde(default)]
    messages: u64,
    #[serde(default)]
    notes: Vec<String>,
}

/// One span of the timeline, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub rank: u32,
    pub activity: Activity,
    pub start: f64,
    pub end: f64,
}

/// A replay read from a file.
#[derive(Clone, Debug)]
pub struct Replay {
    pub summary: Summary,
    /// `None` for `simulate --json` output.
    pub spans: Option<Vec<Span>>,
}

fn located(origin: &str, text: &str, line: usize, column: usize, msg: String) -> Diagnostic {
    let at = (line_offset(text, line) + column.saturating_sub(1)).min(text.len());
    let start = at.min(text.len().saturating_sub(1));
    Diagnostic::new(
        origin,
        text,
        SrcSpan::new(start, (start + 1).min(text.len()).max(start)),
        msg,
    )
}

impl Replay {
    /// Read `text` (from `origin`): a `simulate --timeline` trace or `simulate --json`.
    pub fn parse(origin: &str, text: &str) -> Result<Replay, Diagnostic> {
        let f: File = serde_json::from_str(text).map_err(|e| {
            located(
                origin,
                text,
                e.line(),
                e.column(),
                format!("not a replay: {e}"),
            )
            .with_hint("give the file `perfcompose simulate --timeline FILE` writes, or the output of `simulate --json`")
        })?;
        let whole = |msg: &str| {
            Diagnostic::new(origin, text, SrcSpan::new(0, text.len().min(1)), msg)
                .with_hint("give the file `perfcompose simulate --timeline FILE` writes, or the output of `simulate --json`")
        };
        match f.trace_events {
            Some(events) => {
                let Some(summary) = f.other_data.and_then(|o| o.replay) else {
                    return Err(whole(
                        "a Chrome trace without `otherData.replay`: not written by `perfcompose simulate --timeline`",
                    ));
                };
                let mut spans = Vec::new();
                for (i, e) in events.iter().enumerate() {
                    if e.ph != "X" {
                        continue;
                    }
                    let bad = |what: &str| {
                        whole(&format!(
                            "trace event {i} ({}): {what}",
                            e.name.as_deref().unwrap_or("unnamed")
                        ))
                    };
                    let (Some(ts), Some(dur), Some(tid)) = (e.ts, e.dur, e.tid) else {
                        return Err(bad("a complete event needs ts, dur and tid"));
                    };
                    if !(ts.is_finite() && dur.is_finite() && ts >= 0.0 && dur >= 0.0) {
                        return Err(bad("ts and dur must be finite and not negative"));
                    }
                    let Some(activity) = e.cat.as_deref().and_then(Activity::from_name) else {
                        return Err(bad("its category is not an activity of a replay (compute, send, recv, ...)"));
                    };
                    if tid as usize >= summary.ranks.len() {
                        return Err(bad(&format!(
                            "tid {tid} is not a rank (the replay has {})",
                            summary.ranks.len()
                        )));
                    }
                    spans.push(Span {
                        rank: tid as u32,
                        activity,
                        start: ts * 1e-6,
                        end: (ts + dur) * 1e-6,
                    });
                }
                Ok(Replay {
                    summary,
                    spans: Some(spans),
                })
            }
            None => match (f.simulated_time_s, f.ranks) {
                (Some(t), Some(ranks)) => Ok(Replay {
                    summary: Summary {
                        simulated_time_s: t,
                        ranks,
                        actions: f.actions,
                        messages: f.messages,
                        notes: f.notes,
                    },
                    spans: None,
                }),
                _ => Err(whole(
                    "neither a timeline (`traceEvents`) nor a replay report (`simulated_time_s`, `ranks`)",
                )),
            },
        }
    }
}

/// The palette colour of an activity.
fn color_of(a: Activity) -> usize {
    match a {
        Activity::Compute => 0,
        Activity::Send => 1,
        Activity::Recv => 2,
        Activity::Collective => 3,
        Activity::Wait => 4,
        Activity::Sleep => 7,
        Activity::Late => 8,
    }
}

/// The ranks drawn: all up to [`MAX_ROWS`], else evenly spaced ones.
fn drawn_ranks(n: usize) -> Vec<usize> {
    if n <= MAX_ROWS {
        (0..n).collect()
    } else {
        (0..MAX_ROWS).map(|i| i * n / MAX_ROWS).collect()
    }
}

/// The page of a replay read from `origin`.
pub fn page(replay: &Replay, origin: &str) -> Result<Page, Error> {
    let s = &replay.summary;
    let n = s.ranks.len();
    let mut page = Page::new("perfcompose: trace replay");
    page.para(&format!(
        "{origin}: {n} ranks, {} actions, {} messages; simulated time {}s.",
        s.actions,
        s.messages,
        crate::plot::tick(s.simulated_time_s)
    ));
    for note in &s.notes {
        page.note(note);
    }
    let rows = drawn_ranks(n);
    if n > MAX_ROWS {
        page.note(&format!(
            "{n} ranks: {MAX_ROWS} of them, evenly spaced, are drawn (rank {} .. {}); the table lists every rank.",
            rows[0],
            rows[rows.len() - 1]
        ));
    }
    let row_of: BTreeMap<usize, usize> = rows.iter().enumerate().map(|(i, r)| (*r, i)).collect();
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("rank {}", s.ranks[*r].rank))
        .collect();
    let height = (80 + 18 * rows.len()).clamp(260, 1300) as u32;
    let legend: String = Activity::ALL
        .iter()
        .map(|a| {
            format!(
                "<span class=\"key\"><span class=\"swatch\" style=\"background:{}\"></span>{}</span> ",
                css_color(color_of(*a)),
                shown(*a)
            )
        })
        .collect();
    let mut totals: Option<Vec<BTreeMap<Activity, f64>>> = None;
    match &replay.spans {
        None => page.note(
            "This file is `simulate --json` output, which has no timeline: run `perfcompose simulate --timeline FILE` and report on FILE to see one.",
        ),
        Some(spans) => {
            let shown = spans.iter().filter(|sp| row_of.contains_key(&(sp.rank as usize)));
            let exact = spans.len() <= MAX_EXACT_SPANS;
            let end = s.simulated_time_s.max(spans.iter().map(|sp| sp.end).fold(0.0, f64::max));
            let bars = if exact {
                shown
                    .map(|sp| Bar {
                        row: row_of[&(sp.rank as usize)],
                        from: sp.start,
                        to: sp.end,
                        color: color_of(sp.activity),
                    })
                    .collect()
            } else {
                page.note(&format!(
                    "{} spans: each rank's time is cut into {BINS} bins, each drawn in the colour of the activity that took most of it (white: idle most of the bin).",
                    spans.len()
                ));
                binned(shown, &row_of, rows.len(), end)
            };
            let t = Timeline {
                x_label: "simulated time".into(),
                rows: labels.clone(),
                bars,
                end,
            };
            page.heading("Timeline");
            page.card(
                Figure {
                    name: "replay-timeline".into(),
                    svg: t.svg((1000, height))?,
                },
                "what each rank does over simulated time",
                &format!("<p>{legend}</p><p><i>waiting</i> (as <code>simulate</code> calls it; <code>late</code> in the timeline file): blocked before the partner had posted the matching operation.</p>"),
            );
            let mut per: Vec<BTreeMap<Activity, f64>> = vec![BTreeMap::new(); n];
            for sp in spans {
                *per[sp.rank as usize].entry(sp.activity).or_default() += sp.end - sp.start;
            }
            totals = Some(per);
        }
    }
    // The breakdown: by activity from the timeline, else the report's four sums.
    let (parts, values): (Vec<(String, usize)>, Vec<Vec<f64>>) = match &totals {
        Some(per) => (
            Activity::ALL
                .iter()
                .map(|a| (shown(*a).to_string(), color_of(*a)))
                .collect(),
            rows.iter()
                .map(|r| {
                    Activity::ALL
                        .iter()
                        .map(|a| per[*r].get(a).copied().unwrap_or(0.0))
                        .collect()
                })
                .collect(),
        ),
        None => (
            vec![
                ("compute".into(), 0),
                ("sleep".into(), 7),
                ("communication".into(), 1),
                ("waiting".into(), 8),
            ],
            rows.iter()
                .map(|r| {
                    let k = &s.ranks[*r];
                    vec![k.compute_s, k.sleep_s, k.communication_s, k.waiting_s]
                })
                .collect(),
        ),
    };
    let part_legend: String = parts
        .iter()
        .map(|(name, c)| {
            format!(
                "<span class=\"key\"><span class=\"swatch\" style=\"background:{}\"></span>{}</span> ",
                css_color(*c),
                name
            )
        })
        .collect();
    let b = Stacked {
        x_label: "time".into(),
        rows: labels,
        parts,
        values,
    };
    page.heading("Per-rank breakdown");
    page.card(
        Figure {
            name: "replay-breakdown".into(),
            svg: b.svg((1000, height))?,
        },
        "where each rank's time goes",
        &format!("<p>{part_legend}</p>"),
    );
    let table: Vec<Vec<String>> = s
        .ranks
        .iter()
        .map(|k| {
            vec![
                k.rank.to_string(),
                k.host.clone(),
                format!("{:.6}", k.compute_s),
                format!("{:.6}", k.sleep_s),
                format!("{:.6}", k.communication_s),
                format!("{:.6}", k.waiting_s),
                format!("{:.6}", k.finish_s),
                k.actions.to_string(),
            ]
        })
        .collect();
    page.table(
        &[
            "rank",
            "host",
            "compute [s]",
            "sleep [s]",
            "communication [s]",
            "waiting [s]",
            "finish [s]",
            "actions",
        ],
        &table,
    );
    Ok(page)
}

/// Spans aggregated into [`BINS`] bins per drawn rank, neighbouring bins of the same
/// dominant activity merged into one bar.
fn binned<'a>(
    spans: impl Iterator<Item = &'a Span>,
    row_of: &BTreeMap<usize, usize>,
    nrows: usize,
    end: f64,
) -> Vec<Bar> {
    let width = if end > 0.0 { end / BINS as f64 } else { 1.0 };
    let k = Activity::ALL.len();
    let mut time = vec![0.0f64; nrows * BINS * k];
    for sp in spans {
        let row = row_of[&(sp.rank as usize)];
        let a = Activity::ALL
            .iter()
            .position(|x| *x == sp.activity)
            .unwrap_or(0);
        let first = ((sp.start / width) as usize).min(BINS - 1);
        let last = ((sp.end / width) as usize).min(BINS - 1);
        for bin in first..=last {
            let lo = sp.start.max(bin as f64 * width);
            let hi = sp.end.min((bin + 1) as f64 * width);
            if hi > lo {
                time[(row * BINS + bin) * k + a] += hi - lo;
            }
        }
    }
    let mut bars = Vec::new();
    for row in 0..nrows {
        let mut run: Option<(usize, usize)> = None; // (start bin, activity)
        for bin in 0..=BINS {
            let dominant = (bin < BINS)
                .then(|| {
                    let cell = &time[(row * BINS + bin) * k..(row * BINS + bin + 1) * k];
                    let (a, t) = cell
                        .iter()
                        .enumerate()
                        .max_by(|x, y| x.1.total_cmp(y.1))
                        .unwrap_or((0, &0.0));
                    (*t > width / 2.0).then_some(a)
                })
                .flatten();
            match (run, dominant) {
                (Some((_, a)), Some(b)) if a == b => {}
                _ => {
                    if let Some((start, a)) = run {
                        bars.push(Bar {
                            row,
                            from: start as f64 * width,
                            to: bin as f64 * width,
                            color: color_of(Activity::ALL[a]),
                        });
                    }
                    run = dominant.map(|a| (bin, a));
                }
            }
        }
    }
    bars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_input_is_located() {
        let e = Replay::parse("run.json", "{\n  \"ranks\": [1,\n").unwrap_err();
        let (line, _) = e.line_col();
        assert!(line >= 2, "{e:?}");
        let e = Replay::parse("run.json", "{\"x\": 1}").unwrap_err();
        assert!(e.message.contains("neither"), "{}", e.message);
        let e = Replay::parse(
            "t.json",
            r#"{"traceEvents":[{"ph":"X","ts":0,"dur":1,"tid":0,"cat":"compute"}]}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("otherData"), "{}", e.message);
    }

    #[test]
    fn bins_take_the_dominant_activity_and_merge() {
        let spans = [
            Span {
                rank: 0,
                activity: Activity::Compute,
                start: 0.0,
                end: 0.5,
            },
            Span {
                rank: 0,
                activity: Activity::Send,
                start: 0.5,
                end: 1.0,
            },
        ];
        let row_of: BTreeMap<usize, usize> = [(0, 0)].into_iter().collect();
        let bars = binned(spans.iter(), &row_of, 1, 1.0);
        assert_eq!(bars.len(), 2);
        assert_eq!(bars[0].color, color_of(Activity::Compute));
        assert!((bars[0].to - 0.5).abs() < 1e-9);
        assert_eq!(bars[1].color, color_of(Activity::Send));
    }

    #[test]
    fn many_ranks_are_sampled_evenly() {
        let r = drawn_ranks(256);
        assert_eq!(r.len(), MAX_ROWS);
        assert_eq!(r[0], 0);
        assert_eq!(r[1], 4);
        assert_eq!(drawn_ranks(3), vec![0, 1, 2]);
    }
}
