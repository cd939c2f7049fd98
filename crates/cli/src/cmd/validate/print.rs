//! The validation report for people (tables and the summary) or as JSON.

use std::io::{self, Write};

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use perfcompose_runtime::host::{neighbour, states};
use perfcompose_runtime::validate::{self, Report, Verdict};

use super::args::Args;

pub fn print(args: &Args, report: &Report) -> anyhow::Result<()> {
    let mut out = crate::report::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report.to_json())?)?;
    } else {
        print_report(&mut out, report)?;
    }
    Ok(())
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}%", 100.0 * v)
    } else {
        "n/a".into()
    }
}

fn print_report(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let mut blocks = Table::new();
    blocks.load_preset(UTF8_FULL_CONDENSED);
    blocks.set_header(vec![
        "block",
        "fitted model [ns], all its measurements (each configuration uses its own)",
    ]);
    for (k, m) in &report.components {
        blocks.add_row(vec![k.clone(), m.rounded(4)]);
    }
    writeln!(out, "{blocks}")?;

    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "configuration",
        "threads",
        "modular model [ns]",
        "monolithic model [ns]",
        "coef. error",
        "time error",
        "error over rounds: median [95%]",
        "program vs itself",
        "runs in interval",
        "verdict",
    ]);
    let mut notes = Vec::new();
    for (i, r) in report.rows.iter().enumerate() {
        let target = r
            .target
            .map_or(String::new(), |t| format!("{:.0}%", 100.0 * t));
        let verdict = match r.verdict() {
            Verdict::Within => format!("within ±{target}"),
            Verdict::Miss => format!("MISS (beyond ±{target}) [{}]", i + 1),
            Verdict::Undecided => format!("undecided (±{target}) [{}]", i + 1),
            Verdict::ReportedOnly => format!("reported only [{}]", i + 1),
        };
        let rounds = r.rounds.as_ref().map_or(1, |x| x.count);
        let interval = match r.rounds.as_ref().and_then(|x| x.worst()) {
            Some(w) => match (w.low, w.high) {
                (Some(lo), Some(hi)) => format!(
                    "{:+.1}% [{:+.1}%, {:+.1}%] at x={}, {rounds} rounds",
                    100.0 * w.median,
                    100.0 * lo,
                    100.0 * hi,
                    w.x
                ),
                _ => format!(
                    "{:+.1}% at x={}, {rounds} round(s): no interval",
                    100.0 * w.median,
                    w.x
                ),
            },
            None => "–".into(),
        };
        if !r.notes.is_empty() {
            let text: Vec<String> = r.notes.iter().map(ToString::to_string).collect();
            notes.push(format!(
                "[{}] {}: {}",
                i + 1,
                r.configuration,
                text.join("; ")
            ));
        }
        t.add_row(vec![
            r.configuration.clone(),
            format!(
                "{}{}",
                r.threads,
                if r.within_cores { "" } else { " > cores" }
            ),
            r.modular.rounded(4),
            r.monolithic.rounded(4),
            pct(r.coefficient_error),
            pct(r.time_error),
            interval,
            r.repeat_error.map_or_else(|| "–".into(), pct),
            if r.coverage.runs == 0 {
                "–".into()
            } else {
                format!("{} of {}", r.coverage.inside, r.coverage.runs)
            },
            verdict,
        ]);
    }
    writeln!(out, "{t}")?;
    for n in notes {
        writeln!(out, "{n}")?;
    }
    let s = report.summary();
    writeln!(
        out,
        "{} judged: {} within target, {} missed ({} of them within the program's own variation), {} undecided; {} reported only; target: at most {:.0}% missed and {:.0}% undecided: {}",
        s.judged,
        s.within_target,
        s.misses,
        s.misses_within_repeat,
        s.undecided,
        report.rows.len() - s.judged,
        100.0 * s.rule.misses,
        100.0 * s.rule.undecided,
        if s.judged == 0 {
            "nothing judged"
        } else if s.meets_target {
            "met"
        } else {
            "NOT met"
        },
    )?;
    match s.budget {
        Some(b) => writeln!(
            out,
            "rounds: {b}; a row is within when every size's 95% interval of (predicted − measured) / measured over its rounds lies within ±target, a miss when one lies beyond; median time error {}",
            s.median_error.map_or_else(|| "n/a".into(), pct)
        )?,
        None => writeln!(
            out,
            "rounds: none saved (a run from before rounds): nothing can be decided; median time error {}",
            s.median_error.map_or_else(|| "n/a".into(), pct)
        )?,
    }
    let level = report
        .rows
        .iter()
        .flat_map(|r| r.points.iter().filter_map(|p| p.interval))
        .map(|i| i.level)
        .next();
    if let Some(level) = level {
        writeln!(
            out,
            "one-run intervals ({:.0}%, the blocks' fit uncertainty and run-to-run variation): {} of {} of the program's runs inside ({})",
            100.0 * level,
            s.coverage.inside,
            s.coverage.runs,
            if s.coverage.runs == 0 {
                "n/a".to_string()
            } else {
                pct(s.coverage.inside as f64 / s.coverage.runs as f64)
            }
        )?;
    }
    let dc = &s.design_choices;
    if dc.decided_pairs + dc.too_close > 0 {
        writeln!(
            out,
            "design choices (configurations over the same kernels, at each size they share): {} right of {} decided pairs; {} too close to call (predictions within 2%)",
            dc.right, dc.decided_pairs, dc.too_close
        )?;
        for w in &dc.wrong {
            writeln!(
                out,
                "  wrong choice at x={}: predicted {} ({}) faster than {} ({}), measured {:.1}% slower",
                w.x,
                w.slower,
                perfcompose_runtime::validate::notes::duration(w.slower_predicted),
                w.faster,
                perfcompose_runtime::validate::notes::duration(w.faster_predicted),
                100.0 * (w.measured_log_ratio.exp() - 1.0)
            )?;
        }
    }
    if report.suite == validate::OWN_PROGRAM {
        for r in &report.rows {
            let mut errors: Vec<f64> = r
                .points
                .iter()
                .map(|p| (p.predicted - p.measured).abs() / p.measured)
                .collect();
            errors.sort_by(f64::total_cmp);
            if let Some(m) = errors.get(errors.len() / 2) {
                let at: Vec<String> = r
                    .points
                    .iter()
                    .map(|p| {
                        format!(
                            "{}: {:+.1}%",
                            p.x,
                            100.0 * (p.predicted - p.measured) / p.measured
                        )
                    })
                    .collect();
                writeln!(
                    out,
                    "prediction against your program, point by point (x: (predicted − measured) / measured): {}; median {}",
                    at.join(", "),
                    pct(*m),
                )?;
            }
        }
        writeln!(out, "statistic: the {}", report.measure)?;
        return Ok(());
    }
    writeln!(
        out,
        "statistic: the {}; pattern overhead {}",
        report.measure,
        if report.overhead_calibrated {
            "included (calibrated)"
        } else {
            "not included (`perfcompose calibrate overhead` measures it)"
        }
    )?;
    print_host(out, report)?;
    if let Some((before, after)) = report.load {
        writeln!(
            out,
            "load average {before:.1} before, {after:.1} after the run (which counts the run's own threads) on {} cores{}",
            report.cores,
            if before > report.cores as f64 * 0.75 {
                ": other work was running when the run started, so whole-program times may be inflated; validate on a quiet machine"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}

/// What the host check around the designs read.
fn print_host(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let hosts: Vec<(&str, &validate::HostAtRow)> = report
        .rows
        .iter()
        .filter_map(|r| Some((r.configuration.as_str(), r.host.as_ref()?)))
        .collect();
    if hosts.is_empty() {
        return Ok(());
    }
    let moved = hosts.iter().filter(|(_, h)| h.speed_moved()).count();
    let worst = hosts
        .iter()
        .map(|&(c, h)| (c, h.speed_change()))
        .max_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()));
    writeln!(
        out,
        "host speed, the check's blocks alone right after each of the {} designs within the cores over right before it: {moved} moved by more than {:.2}x either way{}",
        hosts.len(),
        neighbour::SPEED_TOLERANCE,
        worst.map_or(String::new(), |(c, r)| format!(", the most {r:.2}x ({c})")),
    )?;
    if let Some([before, after]) = &report.host_check {
        writeln!(
            out,
            "host check, a busy core next to the one timing a block (median of {} rounds): before the first design of two threads {}; after the last {}",
            before.rounds,
            before.describe(),
            after.describe(),
        )?;
    }
    let mut shares: Vec<f64> = hosts
        .iter()
        .filter_map(|(_, h)| h.state_shares())
        .flat_map(|[b, a]| [b.every, a.every])
        .collect();
    if !shares.is_empty() {
        shares.sort_by(f64::total_cmp);
        writeln!(
            out,
            "cores' speed states (`{}` x={} on every core at once at each end of the designs within the cores): every core in its fast state at once in {:.0}% of the windows (median; {:.0}% to {:.0}%), fast being within {:.2}x of the fastest window of any core in this run",
            states::KERNEL,
            states::X,
            shares[shares.len() / 2] * 100.0,
            shares[0] * 100.0,
            shares[shares.len() - 1] * 100.0,
            states::FAST,
        )?;
    }
    Ok(())
}
