//! The designs page (`report --components F --term T [--term T2 ...] --at x=A..B`): each
//! design's composed model over the range of one parameter with the models of its
//! pipeline's stages, the region where each stage is the bottleneck shaded, and the
//! crossover points marked; with two or more terms, their models compared in one plot.
//!
//! Prediction intervals are drawn as bands where a design's model has one
//! ([`Curve::band`]): components with an uncertainty give one; without, the page says that none
//! is drawn rather than inventing one.

use perfcompose_core::components::Components;
use perfcompose_core::compose::grid::{log_spaced, Axis, Grid};
use perfcompose_core::compose::predict::{predict, Prediction};
use perfcompose_core::compose::{compose, ComposeOptions, Stage};
use perfcompose_core::diag::{Diagnostic, Span};
use perfcompose_core::model::Expr;
use perfcompose_core::term::{Node, NodeKind, Term};

use crate::page::{esc, Figure, Page};
use crate::plot::{css_color, Curve, LogLog, Marker, Region};
use crate::Error;

/// Points each curve is evaluated at.
pub const SAMPLES: usize = 160;
const SIZE: (u32, u32) = (760, 440);
/// Most designs named in the comparison plot's own legend.
const LEGEND_MAX: usize = 6;
/// Colours before they repeat (then lines are dashed).
const PALETTE_SIZE: usize = crate::plot::PALETTE_SIZE;
/// The range drawn when `--at` gives none: the sizes `predict` evaluates by default.
const DEFAULT_RANGE: (f64, f64) = (1.0, 1073741824.0);

/// The parameter drawn along x, its range, and the fixed values of the others.
#[derive(Clone, Debug)]
pub struct Range {
    pub name: String,
    pub from: f64,
    pub to: f64,
    pub fixed: Vec<(String, f64)>,
}

impl Range {
    /// From `--at` arguments: the axis given as a range `A..B` (or, failing that, the first
    /// with several values, from its smallest to its largest) varies; every other name must
    /// have a single value. No grid: `x` from 1 to 2^30.
    pub fn from_grid(grid: &Grid) -> Result<Range, Diagnostic> {
        let axes = &grid.axes;
        let varying = axes
            .iter()
            .position(|a| a.range.is_some())
            .or_else(|| axes.iter().position(|a| a.values.len() > 1));
        let Some(v) = varying else {
            let fixed: Vec<(String, f64)> =
                axes.iter().map(|a| (a.name.clone(), a.values[0])).collect();
            if fixed.iter().any(|(n, _)| n == "x") {
                return Err(Diagnostic::whole(
                    "--at",
                    "x has a single value: give a range such as --at x=2^10..2^20 to draw",
                ));
            }
            return Ok(Range {
                name: "x".into(),
                from: DEFAULT_RANGE.0,
                to: DEFAULT_RANGE.1,
                fixed,
            });
        };
        let a: &Axis = &axes[v];
        let (from, to) = a.range.unwrap_or_else(|| {
            let lo = a.values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = a.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        });
        if from <= 0.0 || to <= from {
            return Err(Diagnostic::new(
                "--at",
                &a.text,
                Span::new(0, a.text.len()),
                "the pictures use log axes: the values must be positive and not all equal",
            ));
        }
        let mut fixed = Vec::new();
        for (i, b) in axes.iter().enumerate() {
            if i == v {
                continue;
            }
            if b.values.len() != 1 {
                return Err(Diagnostic::new(
                    "--at",
                    &b.text,
                    Span::new(0, b.text.len()),
                    format!(
                        "`{}` has {} values, but a picture varies one parameter ({})",
                        b.name,
                        b.values.len(),
                        a.name
                    ),
                )
                .with_hint(format!(
                    "give {} a single value, e.g. --at {}={}",
                    b.name, b.name, b.values[0]
                )));
            }
            fixed.push((b.name.clone(), b.values[0]));
        }
        Ok(Range {
            name: a.name.clone(),
            from,
            to,
            fixed,
        })
    }

    fn samples(&self) -> Vec<f64> {
        log_spaced(self.from, self.to, SAMPLES)
    }

    fn grid(&self) -> Result<Grid, Diagnostic> {
        let xs = self.samples();
        let mut axes = vec![axis(&self.name, xs)];
        axes.extend(self.fixed.iter().map(|(n, v)| axis(n, vec![*v])));
        Grid::new(axes)
    }

    fn point(&self, x: f64) -> Vec<(&str, f64)> {
        let mut p = vec![(self.name.as_str(), x)];
        p.extend(self.fixed.iter().map(|(n, v)| (n.as_str(), *v)));
        p
    }
}

fn axis(name: &str, values: Vec<f64>) -> Axis {
    Axis {
        name: name.to_string(),
        spans: vec![Span::new(0, 0); values.len()],
        text: format!("{name}=..."),
        values,
        range: None,
    }
}

/// The outermost pipeline of a term, through enclosing task pools.
fn root_pipeline(n: &Node) -> Option<Span> {
    let mut n = n;
    loop {
        match &n.kind {
            NodeKind::Tpool { body, .. } => n = body,
            NodeKind::Pipe(_) => return Some(n.span),
            _ => return None,
        }
    }
}

/// One design, evaluated over the range.
struct Design {
    term: String,
    prediction: Prediction,
    stages: Vec<Stage>,
}

/// The prediction's interval at each sample of the range (`None` without one).
fn band_of(p: &Prediction, range: &Range) -> Option<Vec<(f64, f64, f64)>> {
    let band: Vec<(f64, f64, f64)> = p
        .values
        .iter()
        .filter_map(|v| {
            let i = v.interval?;
            Some((*v.point.get(&range.name)?, i.low, i.high))
        })
        .collect();
    (!band.is_empty()).then_some(band)
}

fn curve_of(expr: &Expr, range: &Range) -> Vec<(f64, f64)> {
    range
        .samples()
        .into_iter()
        .filter_map(|x| expr.eval_at(&range.point(x)).ok().map(|y| (x, y)))
        .collect()
}

/// The page for `terms` composed from `components`.
pub fn page(
    terms: &[Term],
    components: &Components,
    opts: ComposeOptions,
    range: &Range,
) -> Result<Page, Error> {
    let grid = range.grid()?;
    let mut designs = Vec::new();
    for term in terms {
        let prediction = predict(term, components, opts, &grid)?;
        let comp = compose(term, components, opts)?;
        let stages = match root_pipeline(&term.root)
            .and_then(|s| comp.pipelines.iter().position(|p| p.span == s))
        {
            Some(i) => comp.stages(i, term, components, opts)?,
            None => Vec::new(),
        };
        designs.push(Design {
            term: term.root.to_string(),
            prediction,
            stages,
        });
    }
    let mut page = Page::new("perfcompose: designs");
    let fixed = if range.fixed.is_empty() {
        String::new()
    } else {
        let f: Vec<String> = range
            .fixed
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        format!(", at {}", f.join(", "))
    };
    page.para(&format!(
        "Components: {}. Models over {} = {} .. {}{fixed} ({SAMPLES} log-spaced points); log-log axes; y is the predicted time in ns (per element for the built-in Table 1 blocks), models with 4 significant digits.",
        components.origin,
        range.name,
        crate::plot::tick(range.from),
        crate::plot::tick(range.to),
    ));
    match designs
        .iter()
        .find_map(|d| d.prediction.values.iter().find_map(|v| v.interval))
    {
        Some(i) => page.para(&format!(
            "Shaded bands: {}% prediction intervals, from the components' uncertainty (bootstrap refits of fitted components, stated errors of the others).",
            crate::plot::tick(100.0 * i.level)
        )),
        None => page.note("No prediction intervals are drawn: no component states or fits an uncertainty (components fitted from measurements, or given `relative_error`/`stderr`, have one)."),
    }

    if designs.len() > 1 {
        let curves = designs
            .iter()
            .enumerate()
            .map(|(i, d)| Curve {
                // Past a few designs a legend would hide the plot: the table beside it
                // names the colours; past the palette, lines are dashed.
                label: if designs.len() <= LEGEND_MAX {
                    d.term.clone()
                } else {
                    String::new()
                },
                color: i,
                dashed: i >= PALETTE_SIZE,
                line: curve_of(&d.prediction.expr, range),
                width: 2,
                band: band_of(&d.prediction, range),
                ..Curve::default()
            })
            .collect();
        let chart = LogLog {
            x_label: range.name.clone(),
            y_label: Y_LABEL.into(),
            curves,
            ..LogLog::default()
        };
        let mut side = String::from("<table><tr><th>design</th><th>model</th></tr>");
        for (i, d) in designs.iter().enumerate() {
            side.push_str(&format!(
                "<tr><td><span class=\"swatch\" style=\"background:{}\"></span><code>{}</code>{}</td><td><code>{}</code></td></tr>",
                css_color(i),
                esc(&d.term),
                if i >= PALETTE_SIZE { " (dashed)" } else { "" },
                esc(&d.prediction.expr.rounded(DIGITS))
            ));
        }
        side.push_str("</table>");
        side.push_str(&smaller_where(&designs, range));
        page.heading("Designs compared");
        page.card(
            Figure {
                name: "designs-compared".into(),
                svg: chart.svg(SIZE)?,
            },
            "the designs' composed models",
            &side,
        );
    }
    for (i, d) in designs.iter().enumerate() {
        page.heading(&format!("Design {}: {}", i + 1, d.term));
        let (chart, side) = design_chart(d, range);
        page.card(
            Figure {
                name: format!("design-{}", i + 1),
                svg: chart.svg(SIZE)?,
            },
            &d.term,
            &side,
        );
    }
    Ok(page)
}

/// Which design is smallest where, over the sampled range.
fn smaller_where(designs: &[Design], range: &Range) -> String {
    let xs = range.samples();
    let mut best: Vec<Option<usize>> = Vec::with_capacity(xs.len());
    for x in &xs {
        let p = range.point(*x);
        let vals: Vec<Option<f64>> = designs
            .iter()
            .map(|d| d.prediction.expr.eval_at(&p).ok().filter(|v| v.is_finite()))
            .collect();
        let b = vals
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| (i, v)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i);
        best.push(b);
    }
    let mut out = String::from("<p>smallest model:</p><ul>");
    let mut start = 0;
    for i in 1..=best.len() {
        if i == best.len() || best[i] != best[start] {
            let who =
                best[start].map_or("none (not finite)".to_string(), |k| designs[k].term.clone());
            out.push_str(&format!(
                "<li>{} = {} .. {}: <code>{}</code></li>",
                esc(&range.name),
                crate::plot::tick(xs[start]),
                crate::plot::tick(xs[i - 1]),
                esc(&who)
            ));
            start = i;
        }
    }
    out.push_str("</ul>");
    out
}

/// The y axis of the designs' charts: the composed models' values, in the one unit
/// components are read in.
const Y_LABEL: &str = "predicted time [ns]";

/// Significant digits of the models the page prints.
const DIGITS: usize = 4;

/// The composed model's colour (black, no stage's).
const COMPOSED: usize = crate::plot::BLACK_INDEX;

/// The colour of the stretches where a component is beyond its measured range (red).
const BEYOND: usize = 3;

/// The stretches of the composed curve where some component is evaluated beyond the
/// range it was measured on: one run of samples each.
fn beyond_measured(d: &Design, range: &Range) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut open = false;
    for v in &d.prediction.values {
        let Some(&x) = v.point.get(&range.name) else {
            continue;
        };
        if v.extrapolation.is_empty() || !v.value.is_finite() {
            open = false;
            continue;
        }
        if !open {
            runs.push(Vec::new());
            open = true;
        }
        if let Some(run) = runs.last_mut() {
            run.push((x, v.value));
        }
    }
    runs
}

/// One design: its model, its stages dashed, the bottleneck regions and crossovers.
fn design_chart(d: &Design, range: &Range) -> (LogLog, String) {
    // The composed model in black over its band (a colour of its own, not a stage's),
    // drawn after the stages so that they never hide it.
    let composed = Curve {
        label: "composed model".into(),
        color: COMPOSED,
        line: curve_of(&d.prediction.expr, range),
        width: 3,
        band: band_of(&d.prediction, range),
        ..Curve::default()
    };
    let mut curves = Vec::new();
    for (k, s) in d.stages.iter().enumerate() {
        curves.push(Curve {
            label: format!("stage {}", s.term),
            color: k,
            line: curve_of(&s.model, range),
            width: 2,
            dashed: true,
            ..Curve::default()
        });
    }
    // Bottleneck regions: runs of samples with the same leading stage, split halfway (in
    // log scale) between the samples where it changes.
    let mut regions = Vec::new();
    let vals = &d.prediction.values;
    let stage_index = |name: &Option<String>| {
        name.as_ref()
            .and_then(|n| d.stages.iter().position(|s| &s.term == n))
    };
    let mut start = 0;
    for i in 1..=vals.len() {
        if i == vals.len() || vals[i].bottleneck != vals[start].bottleneck {
            if let Some(k) = stage_index(&vals[start].bottleneck) {
                let x = |j: usize| vals[j].point[&range.name];
                let from = if start == 0 {
                    range.from
                } else {
                    (x(start - 1) * x(start)).sqrt()
                };
                let to = if i == vals.len() {
                    range.to
                } else {
                    (x(i - 1) * x(i)).sqrt()
                };
                regions.push(Region { from, to, color: k });
            }
            start = i;
        }
    }
    let fixed_matches = |given: &std::collections::BTreeMap<String, f64>| {
        given
            .iter()
            .all(|(n, v)| range.fixed.iter().any(|(m, w)| m == n && w == v))
    };
    let markers: Vec<Marker> = d
        .prediction
        .crossovers
        .iter()
        .filter(|c| fixed_matches(&c.given) && c.x > range.from && c.x < range.to)
        .map(|c| Marker {
            x: c.x,
            label: format!("{} = {}", range.name, crate::plot::tick(c.x)),
        })
        .collect();

    curves.push(composed);
    let beyond = beyond_measured(d, range);
    curves.extend(beyond.iter().enumerate().map(|(k, run)| Curve {
        label: if k == 0 {
            "components beyond their measured range".into()
        } else {
            String::new()
        },
        color: BEYOND,
        line: run.clone(),
        width: 9,
        faint: true,
        ..Curve::default()
    }));
    let mut side = format!(
        "<p>model: <code>{}</code></p>",
        esc(&d.prediction.expr.rounded(DIGITS))
    );
    if let Some(dom) = &d.prediction.dominant {
        side.push_str(&format!("<p>dominant term: <code>{}</code></p>", esc(dom)));
    }
    if !d.stages.is_empty() {
        side.push_str("<table><tr><th>stage</th><th>model (as it enters the design)</th></tr>");
        for (k, s) in d.stages.iter().enumerate() {
            side.push_str(&format!(
                "<tr><td><span class=\"swatch\" style=\"background:{}\"></span><code>{}</code></td><td><code>{}</code></td></tr>",
                css_color(k),
                esc(&s.term),
                esc(&s.model.rounded(DIGITS))
            ));
        }
        side.push_str("</table><p>The shaded background shows which stage is the bottleneck (the slowest, which sets the pipeline's throughput).</p>");
    } else {
        side.push_str("<p>No pipeline at the top of this design: no stages to compare.</p>");
    }
    let crossings: Vec<String> = d
        .prediction
        .crossovers
        .iter()
        .filter(|c| fixed_matches(&c.given))
        .map(|c| {
            format!(
                "<li>{} → {} at {} = {}{}</li>",
                esc(&c.from),
                esc(&c.to),
                esc(&range.name),
                crate::plot::tick(c.x),
                if c.x > range.from && c.x < range.to {
                    ""
                } else {
                    " (outside the range drawn)"
                }
            )
        })
        .collect();
    if !crossings.is_empty() {
        side.push_str(&format!(
            "<p>crossovers (where the bottleneck changes; dashed lines):</p><ul>{}</ul>",
            crossings.join("")
        ));
    }
    let mut outside: Vec<String> = d
        .prediction
        .values
        .iter()
        .flat_map(|v| &v.extrapolation)
        .map(|e| {
            format!(
                "<code>{}</code> (measured {} = {} .. {})",
                esc(&e.component),
                esc(&e.parameter),
                crate::plot::tick(e.measured[0]),
                crate::plot::tick(e.measured[1])
            )
        })
        .collect();
    outside.sort();
    outside.dedup();
    if !outside.is_empty() {
        side.push_str(&format!(
            "<p class=\"miss\">Beyond their measured range (the wide pale red line): {}.</p>",
            outside.join(", ")
        ));
    }
    for n in &d.prediction.notes {
        side.push_str(&format!("<p class=\"note\">{}</p>", esc(n)));
    }
    let chart = LogLog {
        x_label: range.name.clone(),
        y_label: Y_LABEL.into(),
        curves,
        regions,
        markers,
        ..LogLog::default()
    };
    (chart, side)
}
