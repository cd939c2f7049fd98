//! `perfcompose optimize`: the best design under a core budget (glue over
//! `perfcompose_core::optimize`).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::bail;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use perfcompose_core::model::format_significant;
use perfcompose_core::optimize::{
    optimize_with_progress, Method, Outcome, Progress, Request, EXHAUSTIVE_LIMIT,
};

use super::input::{self, num};

/// Flags of `perfcompose optimize`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  perfcompose optimize --cores 16 'pipe(tpool(?, qsort), tpool(?, inc))' --at x=4096
  perfcompose optimize --cores 4 --rewrites 'pipe(qsort, inc)' --at x=2^20
  perfcompose optimize --components blocks.toml --cores 64 'pipe(tpool(?, a), tpool(?, b), c)' --at x=4096 --json")]
pub struct Args {
    /// The design; `?` marks a thread count to choose (a task pool's, a MapReduce's
    /// `threads=`).
    #[arg(value_name = "TERM")]
    pub term: String,
    /// Cores the design's threads must fit in.
    #[arg(long, value_name = "C", value_parser = crate::cmd::input::cores())]
    pub cores: u64,
    /// The point to compare at, NAME=VALUE (repeatable; one value each).
    #[arg(long = "at", value_name = "NAME=VALUE", required = true)]
    pub at: Vec<String>,
    /// Components file (TOML) [default: the pattern-composition paper's Table 1 blocks, built in].
    #[arg(long, value_name = "FILE")]
    pub components: Option<PathBuf>,
    /// Also score the designs the pattern-composition paper's relational laws make comparable: the blocks in
    /// order, cut into consecutive groups, each a task pool of their `seq`.
    #[arg(long)]
    pub rewrites: bool,
    /// Designs to print, best first.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub top: u64,
    /// Print JSON: `{"designs": [{"term", "threads", "value", "bottleneck", "method", ...}], "best", "exact"}`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let components = input::components(args.components.as_deref())?;
    let grid = input::grid(&args.at)?;
    input::check_machine(&components, &grid)?;
    let mut points = grid.points();
    if points.len() != 1 {
        bail!(
            "optimize compares designs at one point; give one value per --at (got {} points)",
            points.len()
        );
    }
    let point = points.remove(0);
    let req = Request {
        design: &args.term,
        components: &components,
        cores: args.cores,
        point,
        rewrites: args.rewrites,
    };
    let mut outcome = with_progress(|on| optimize_with_progress(&req, on))?;
    outcome.designs.truncate(args.top as usize);
    let mut out = crate::report::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&outcome)?)?;
    } else {
        write!(out, "{}", human(&outcome, &args))?;
    }
    Ok(())
}

/// Run `f` with a progress line on standard error, drawn once the run has taken half a
/// second (and only on a terminal): the designs scored and the allocations scored one
/// by one.
fn with_progress<T>(f: impl FnOnce(&mut dyn FnMut(Progress)) -> T) -> T {
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(
        ProgressStyle::with_template("{spinner} optimizing: {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let mut on = |p: Progress| {
        if started.elapsed() < Duration::from_millis(500) {
            return;
        }
        let mut msg = format!(
            "design {} of {}",
            (p.designs_done + 1).min(p.designs),
            p.designs
        );
        if p.evaluations > 0 {
            msg.push_str(&format!(", {} allocations scored", p.evaluations));
        }
        bar.set_message(msg);
        bar.tick();
    };
    let out = f(&mut on);
    bar.finish_and_clear();
    out
}

fn human(o: &Outcome, args: &Args) -> String {
    let mut s = String::new();
    let at: Vec<&str> = args.at.iter().map(String::as_str).collect();
    s.push_str(&format!(
        "best design on {} cores at {}: {}\n",
        o.cores,
        at.join(", "),
        o.best
    ));
    let level = o.designs.iter().find_map(|d| d.interval).map(|i| i.level);
    let mut header: Vec<String> = ["rank", "design", "threads", "predicted"]
        .map(String::from)
        .to_vec();
    if let Some(l) = level {
        header.push(format!("{}% interval", format_significant(100.0 * l, 3)));
    }
    header.extend(["bottleneck", "search"].map(String::from));
    let mut t = input::table(header);
    for (i, d) in o.designs.iter().enumerate() {
        let mut row = vec![
            (i + 1).to_string(),
            d.term.clone(),
            d.threads.to_string(),
            num(d.value),
        ];
        if level.is_some() {
            row.push(d.interval.map_or_else(String::new, |i| {
                format!("{} .. {}", num(i.low), num(i.high))
            }));
        }
        row.extend([
            d.bottleneck.clone(),
            match d.method {
                Method::AsWritten => "as written".into(),
                Method::Pipeline => "exact (pipeline)".into(),
                Method::ByParts => "exact (by parts)".into(),
                Method::Exhaustive => "exact (every allocation)".into(),
                Method::LocalSearch => "local search".into(),
            },
        ]);
        t.add_row(row);
    }
    s.push_str(&format!("{t}\n"));
    if let [first, second, ..] = &o.designs[..] {
        let ratio = format!("{:.3}", second.value / first.value);
        if ratio == "1.000" {
            let tied = o
                .designs
                .iter()
                .take_while(|d| format!("{:.3}", d.value / first.value) == "1.000")
                .count();
            s.push_str(&format!(
                "the first {tied} designs tie (within 0.05% of each other): none is faster\n"
            ));
        } else {
            s.push_str(&format!("the best is {ratio}x faster than the second\n"));
        }
        if let Some(p) = o.probability_best_beats_second {
            s.push_str(&format!(
                "the best beats the second in {:.1}% of the draws of the components' uncertainty\n",
                100.0 * p
            ));
        }
    }
    if !o.exact {
        s.push_str(&format!(
            "some allocations come from a local search ({EXHAUSTIVE_LIMIT} evaluations at most per part) and may not be the best\n"
        ));
        let mut parts: Vec<&str> = o
            .designs
            .iter()
            .flat_map(|d| d.searched_parts.iter().map(String::as_str))
            .collect();
        parts.sort_unstable();
        parts.dedup();
        for p in parts {
            s.push_str(&format!("  searched, not enumerated: {p}\n"));
        }
    }
    for k in &o.skipped {
        s.push_str(&format!("skipped {}: {}\n", k.design, k.why));
    }
    s
}
