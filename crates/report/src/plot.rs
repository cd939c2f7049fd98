//! Drawing: every picture of the report is one of the charts here, drawn with `plotters`
//! into an SVG string. The pages decide what to draw; this module only knows how.
//!
//! - [`LogLog`]: curves, measured points with their spread, shaded x-regions, vertical
//!   markers and optional bands on log–log axes (models, designs, validations).
//! - [`Timeline`]: one row per rank with coloured spans over time (replays).
//! - [`Stacked`]: one horizontal stacked bar per rank (a replay's breakdown).

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::Error;

/// Width and height of a chart in pixels.
pub type Size = (u32, u32);

/// The categorical palette (Tableau 10): distinct, readable on white, printable.
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

/// Colours in the palette.
pub const PALETTE_SIZE: usize = PALETTE.len();

/// A colour index past the palette that means black (a composed model, drawn over the
/// coloured parts it is made of).
pub const BLACK_INDEX: usize = usize::MAX;

fn rgb(i: usize) -> (u8, u8, u8) {
    if i == BLACK_INDEX {
        (0, 0, 0)
    } else {
        PALETTE[i % PALETTE.len()]
    }
}

/// The `i`-th colour of the palette (wrapping around; [`BLACK_INDEX`] is black).
pub fn color(i: usize) -> RGBColor {
    let (r, g, b) = rgb(i);
    RGBColor(r, g, b)
}

/// The palette colour as CSS (`#1f77b4`), for legends drawn in HTML.
pub fn css_color(i: usize) -> String {
    let (r, g, b) = rgb(i);
    format!("#{r:02x}{g:02x}{b:02x}")
}

const FONT: &str = "sans-serif";

/// A number for an axis tick: short, with an SI suffix (`1k`, `2.5M`), exact for the
/// powers of two and ten the log axes use.
pub fn tick(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e12 {
        (v / 1e12, "T")
    } else if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else if a >= 1.0 || a == 0.0 {
        (v, "")
    } else if a >= 1e-3 {
        (v * 1e3, "m")
    } else if a >= 1e-6 {
        (v * 1e6, "µ")
    } else {
        (v * 1e9, "n")
    };
    let s = format!("{scaled:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{suffix}")
}

/// Tick positions of a log axis from `lo` to `hi`: 1, 2, 5 per decade over up to three
/// decades, every decade up to eight, every other decade beyond, so that an axis always
/// has a few labels and never a crowd.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades = hi.log10() - lo.log10();
    let (mantissas, step): (&[f64], i32) = if decades <= 3.0 {
        (&[1.0, 2.0, 5.0], 1)
    } else if decades <= 8.0 {
        (&[1.0], 1)
    } else {
        (&[1.0], 2)
    };
    let mut out = Vec::new();
    let mut d = d0;
    while d <= d1 {
        for m in mantissas {
            let v = m * 10f64.powi(d);
            if v >= lo * (1.0 - 1e-12) && v <= hi * (1.0 + 1e-12) {
                out.push(v);
            }
        }
        d += step;
    }
    out
}

/// A line on a [`LogLog`] chart, with optional measured points and a band.
#[derive(Clone, Debug, Default)]
pub struct Curve {
    pub label: String,
    pub color: usize,
    /// (x, y) of the line; points with y ≤ 0 or not finite are left out (log axes).
    pub line: Vec<(f64, f64)>,
    pub dashed: bool,
    /// Drawn lighter, under the others (a composed model that coincides with a stage).
    pub faint: bool,
    pub width: u32,
    /// Measured points: x, then (low, middle, high) of the repetitions.
    pub points: Vec<(f64, [f64; 3])>,
    /// A prediction interval around the line: (x, low, high).
    pub band: Option<Vec<(f64, f64, f64)>>,
}

/// A shaded range of x (where a stage is the bottleneck).
#[derive(Clone, Debug)]
pub struct Region {
    pub from: f64,
    pub to: f64,
    pub color: usize,
}

/// A vertical marker (a crossover point).
#[derive(Clone, Debug)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// A log–log chart.
#[derive(Clone, Debug, Default)]
pub struct LogLog {
    pub x_label: String,
    pub y_label: String,
    pub curves: Vec<Curve>,
    pub regions: Vec<Region>,
    pub markers: Vec<Marker>,
    /// Use a linear y axis (an error in percent) instead of a log one.
    pub linear_y: bool,
    /// Horizontal reference lines (a target), with labels.
    pub hlines: Vec<(f64, String)>,
}

fn finite_pos(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

impl LogLog {
    /// The x and y ranges covering everything drawn, widened a little; `None` when
    /// nothing is drawable.
    fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        let mut xs: Vec<f64> = Vec::new();
        let mut ys: Vec<f64> = Vec::new();
        let ok_y = |v: f64| {
            if self.linear_y {
                v.is_finite()
            } else {
                finite_pos(v)
            }
        };
        for c in &self.curves {
            for &(x, y) in &c.line {
                if finite_pos(x) && ok_y(y) {
                    xs.push(x);
                    ys.push(y);
                }
            }
            for &(x, [lo, mid, hi]) in &c.points {
                if finite_pos(x) {
                    xs.push(x);
                    ys.extend([lo, mid, hi].into_iter().filter(|v| ok_y(*v)));
                }
            }
            for &(x, lo, hi) in c.band.iter().flatten() {
                if finite_pos(x) {
                    ys.extend([lo, hi].into_iter().filter(|v| ok_y(*v)));
                }
            }
        }
        ys.extend(self.hlines.iter().map(|h| h.0).filter(|v| ok_y(*v)));
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if xs.is_empty() || ys.is_empty() {
            return None;
        }
        let (mut x0, mut x1) = (min(&xs), max(&xs));
        let (mut y0, mut y1) = (min(&ys), max(&ys));
        if x1 <= x0 {
            x0 /= 2.0;
            x1 *= 2.0;
        } else if self.curves.iter().any(|c| !c.points.is_empty()) {
            // Room for the markers of the first and last points, which the plot's edge
            // would cut in half.
            let pad = (x1 / x0).powf(0.03);
            x0 /= pad;
            x1 *= pad;
        }
        if self.linear_y {
            let pad = ((y1 - y0) * 0.08).max(y1.abs() * 0.05).max(1e-9);
            y0 = (y0 - pad).min(0.0);
            y1 += pad;
        } else if y1 <= y0 * 1.01 {
            y0 /= 2.0;
            y1 *= 2.0;
        } else {
            y0 /= 1.3;
            y1 *= 1.3;
        }
        Some(((x0, x1), (y0, y1)))
    }

    /// `y1` raised so that the legend's rows in the upper left corner sit above
    /// everything drawn (no line or error bar through it) on a plot `size` high.
    fn above_legend(&self, size: Size, (y0, y1): (f64, f64)) -> f64 {
        let rows = self.curves.iter().filter(|c| !c.label.is_empty()).count()
            + self.hlines.iter().filter(|h| !h.1.is_empty()).count();
        if rows == 0 {
            return y1;
        }
        // Margins and the x axis's labels (as `draw` lays them out), a row per label.
        let plot = (f64::from(size.1) - 2.0 * 12.0 - 42.0).max(1.0);
        let legend = 20.0 * rows as f64 + 14.0;
        let share = (legend / (plot - legend).max(plot / 3.0)).min(2.0);
        if self.linear_y {
            y1 + (y1 - y0) * share
        } else {
            y1 * (y1 / y0).powf(share)
        }
    }

    /// The chart as a standalone SVG document.
    pub fn svg(&self, size: Size) -> Result<String, Error> {
        let bounds = self
            .bounds()
            .map(|(x, (y0, y1))| (x, (y0, self.above_legend(size, (y0, y1)))));
        svg_document(size, |root| match bounds {
            None => root
                .draw(&Text::new(
                    "nothing to draw: no positive, finite values",
                    (20, size.1 as i32 / 2),
                    (FONT, 14).into_font(),
                ))
                .map_err(plot_err),
            Some((x, (y0, y1))) if self.linear_y => {
                self.draw(root, x, (y0, y1), y0..y1, &|v| format!("{v:.0}"), |v| {
                    v.is_finite()
                })
            }
            Some((x, (y0, y1))) => {
                let y_axis = (y0..y1).log_scale().with_key_points(log_ticks(y0, y1));
                self.draw(root, x, (y0, y1), y_axis, &|v| tick(*v), finite_pos)
            }
        })
    }

    /// The chart on a log x axis and the y axis `y_axis` (log or linear) covering
    /// `y0..y1`, its ticks written by `y_tick`; `ok_y` tells which y values can be drawn.
    /// Shaded regions and markers are drawn on log–log charts only.
    fn draw<Y>(
        &self,
        root: &DrawingArea<SVGBackend, Shift>,
        (x0, x1): (f64, f64),
        (y0, y1): (f64, f64),
        y_axis: Y,
        y_tick: &dyn Fn(&f64) -> String,
        ok_y: impl Fn(f64) -> bool,
    ) -> Result<(), Error>
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
                y_axis,
            )
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_labels(8)
            .y_labels(8)
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(y_tick)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.08))
            .draw()
            .map_err(plot_err)?;
        if !self.linear_y {
            for r in &self.regions {
                let (a, b) = (r.from.max(x0), r.to.min(x1));
                if b > a {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(a, y0), (b, y1)],
                            color(r.color).mix(0.10).filled(),
                        )))
                        .map_err(plot_err)?;
                }
            }
        }
        for (y, label) in &self.hlines {
            chart
                .draw_series(DashedLineSeries::new(
                    [(x0, *y), (x1, *y)],
                    6,
                    4,
                    BLACK.mix(0.6).stroke_width(1),
                ))
                .map_err(plot_err)
                .map(|anno| {
                    if !label.is_empty() {
                        anno.label(label.as_str()).legend(|(x, y)| {
                            PathElement::new([(x, y), (x + 18, y)], BLACK.mix(0.6))
                        });
                    }
                })?;
        }
        self.draw_curves(&mut chart, (y0, y1), ok_y)?;
        if !self.linear_y {
            for m in &self.markers {
                if m.x > x0 && m.x < x1 {
                    chart
                        .draw_series(DashedLineSeries::new(
                            [(m.x, y0), (m.x, y1)],
                            3,
                            3,
                            BLACK.stroke_width(1),
                        ))
                        .map_err(plot_err)?;
                    chart
                        // At the bottom, clear of the legend in the upper left corner.
                        .draw_series(std::iter::once(Text::new(
                            format!(" {}", m.label),
                            (m.x, y0 * (y1 / y0).powf(0.06)),
                            (FONT, 12).into_font(),
                        )))
                        .map_err(plot_err)?;
                }
            }
        }
        legend(&mut chart)
    }

    fn draw_curves<'a, X, Y>(
        &self,
        chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
        (y0, y1): (f64, f64),
        ok_y: impl Fn(f64) -> bool,
    ) -> Result<(), Error>
    where
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let clamp = |v: f64| v.clamp(y0, y1);
        for c in &self.curves {
            if let Some(band) = &c.band {
                let upper = band.iter().map(|&(x, _, hi)| (x, clamp(hi)));
                let lower = band.iter().rev().map(|&(x, lo, _)| (x, clamp(lo)));
                let poly: Vec<(f64, f64)> = upper.chain(lower).collect();
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        poly,
                        color(c.color).mix(0.18).filled(),
                    )))
                    .map_err(plot_err)?;
            }
        }
        for c in &self.curves {
            let alpha = if c.faint { 0.35 } else { 1.0 };
            let style = color(c.color).mix(alpha).stroke_width(c.width.max(1));
            let line: Vec<(f64, f64)> = c
                .line
                .iter()
                .copied()
                .filter(|&(x, y)| finite_pos(x) && ok_y(y))
                .map(|(x, y)| (x, clamp(y)))
                .collect();
            let col = color(c.color).mix(alpha);
            let width = c.width.max(1);
            if !line.is_empty() {
                let anno = if c.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(line, 7, 4, style))
                        .map_err(plot_err)?
                } else {
                    chart
                        .draw_series(LineSeries::new(line, style))
                        .map_err(plot_err)?
                };
                if !c.label.is_empty() {
                    anno.label(c.label.as_str()).legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 18, y)], col.stroke_width(width))
                    });
                }
            }
            let pts: Vec<(f64, [f64; 3])> = c
                .points
                .iter()
                .copied()
                .filter(|&(x, [_, m, _])| finite_pos(x) && ok_y(m))
                .collect();
            if !pts.is_empty() {
                chart
                    .draw_series(pts.iter().map(|&(x, [lo, m, hi])| {
                        let lo = if ok_y(lo) { clamp(lo) } else { m };
                        let hi = if ok_y(hi) { clamp(hi) } else { m };
                        ErrorBar::new_vertical(x, lo, m, hi, col.stroke_width(1), 8)
                    }))
                    .map_err(plot_err)?;
                let anno = chart
                    .draw_series(
                        pts.iter()
                            .map(|&(x, [_, m, _])| Circle::new((x, m), 3, col.filled())),
                    )
                    .map_err(plot_err)?;
                if c.line.is_empty() && !c.label.is_empty() {
                    anno.label(c.label.as_str())
                        .legend(move |(x, y)| Circle::new((x + 9, y), 3, col.filled()));
                }
            }
        }
        Ok(())
    }
}

fn legend<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
) -> Result<(), Error>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font((FONT, 13))
        .draw()
        .map_err(plot_err)
}

/// The label of the row centred at `v` (row i is centred at n - 1 - i); none between rows.
fn row_label(rows: &[String], v: f64) -> String {
    let n = rows.len() as f64;
    let i = n - 1.0 - v.round();
    if (v - v.round()).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    rows.get(i as usize).cloned().unwrap_or_default()
}

/// A white page of `size` with what `draw` draws on it, as a standalone SVG document.
fn svg_document(
    size: Size,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), Error>,
) -> Result<String, Error> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        draw(&root)?;
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

/// The axes of a chart of one row per rank over time, 0 to `end` seconds: the rows
/// labelled from the top, their bars to be drawn around [`row_middle`].
fn rank_rows<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    x_label: &str,
    rows: &[String],
    end: f64,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, Error> {
    let n = rows.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..end, -0.5..n as f64 - 0.5)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .x_labels(8)
        .y_labels(n.min(32))
        .x_label_formatter(&|v| format!("{}s", tick(*v)))
        .y_label_formatter(&|v| row_label(rows, *v))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 14))
        .disable_y_mesh()
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
        .draw()
        .map_err(plot_err)?;
    Ok(chart)
}

/// Where row `row` of `rows` rows is centred on the y axis of [`rank_rows`] (the first
/// row at the top).
fn row_middle(rows: usize, row: usize) -> f64 {
    (rows.max(1) - 1 - row) as f64
}

/// One coloured span of a [`Timeline`] row.
#[derive(Clone, Copy, Debug)]
pub struct Bar {
    pub row: usize,
    pub from: f64,
    pub to: f64,
    pub color: usize,
}

/// Rows of coloured spans over time (one row per rank).
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    pub x_label: String,
    pub rows: Vec<String>,
    pub bars: Vec<Bar>,
    pub end: f64,
}

impl Timeline {
    pub fn svg(&self, size: Size) -> Result<String, Error> {
        svg_document(size, |root| {
            let end = if self.end > 0.0 { self.end } else { 1.0 };
            rank_rows(root, &self.x_label, &self.rows, end)?
                .draw_series(self.bars.iter().map(|b| {
                    let mid = row_middle(self.rows.len(), b.row);
                    let (bottom, top) = (mid - 0.4, mid + 0.4);
                    Rectangle::new([(b.from, bottom), (b.to, top)], color(b.color).filled())
                }))
                .map_err(plot_err)?;
            Ok(())
        })
    }
}

/// One horizontal stacked bar per row: `values[row][part]`, the parts coloured by
/// `parts[part].1` (the legend is the page's, in HTML, beside the picture).
#[derive(Clone, Debug, Default)]
pub struct Stacked {
    pub x_label: String,
    pub rows: Vec<String>,
    pub parts: Vec<(String, usize)>,
    pub values: Vec<Vec<f64>>,
}

impl Stacked {
    pub fn svg(&self, size: Size) -> Result<String, Error> {
        svg_document(size, |root| {
            let total = self
                .values
                .iter()
                .map(|v| v.iter().sum::<f64>())
                .fold(0.0, f64::max);
            let end = if total > 0.0 { total * 1.02 } else { 1.0 };
            let mut chart = rank_rows(root, &self.x_label, &self.rows, end)?;
            for (p, (_, c)) in self.parts.iter().enumerate() {
                let col = color(*c);
                let rects: Vec<Rectangle<(f64, f64)>> = self
                    .values
                    .iter()
                    .enumerate()
                    .map(|(row, v)| {
                        let start: f64 = v[..p].iter().sum();
                        let mid = row_middle(self.rows.len(), row);
                        let (bottom, top) = (mid - 0.35, mid + 0.35);
                        Rectangle::new([(start, bottom), (start + v[p], top)], col.filled())
                    })
                    .collect();
                chart.draw_series(rects).map_err(plot_err)?;
            }
            Ok(())
        })
    }
}

fn plot_err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> Error {
    Error::Plot(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_get_a_few_round_ticks() {
        assert_eq!(
            log_ticks(1000.0, 20000.0),
            vec![1000.0, 2000.0, 5000.0, 10000.0, 20000.0]
        );
        assert_eq!(log_ticks(1.0, 1e6).len(), 7);
        assert_eq!(log_ticks(1.0, 1e12).len(), 7);
        assert!(log_ticks(0.0, 1.0).is_empty());
    }

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(1024.0), "1.02k");
        assert_eq!(tick(1e6), "1M");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2.5e-3), "2.5m");
        assert_eq!(tick(100.0), "100");
    }

    #[test]
    fn a_chart_is_an_svg_document_with_its_labels() {
        let chart = LogLog {
            x_label: "x".into(),
            y_label: "time [ns]".into(),
            curves: vec![Curve {
                label: "model <a&b>".into(),
                line: vec![(1.0, 1.0), (1e3, 1e3)],
                points: vec![(10.0, [9.0, 10.0, 11.0])],
                width: 2,
                ..Curve::default()
            }],
            markers: vec![Marker {
                x: 30.0,
                label: "switch".into(),
            }],
            ..LogLog::default()
        };
        let svg = chart.svg((400, 300)).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("time [ns]"));
        assert!(svg.contains("switch"));
        // Labels are escaped XML.
        assert!(svg.contains("model &lt;a&amp;b&gt;"), "legend text escaped");
    }

    #[test]
    fn the_legend_sits_above_the_data_and_edge_points_are_not_cut() {
        let chart = LogLog {
            curves: vec![Curve {
                label: "measured".into(),
                points: vec![(1.0, [1.0, 2.0, 100.0]), (10.0, [5.0, 6.0, 7.0])],
                ..Curve::default()
            }],
            ..LogLog::default()
        };
        let ((x0, x1), (y0, y1)) = chart.bounds().unwrap();
        // The first and last points are inside the plot, not on its edge.
        assert!(x0 < 1.0 && x1 > 10.0, "{x0} {x1}");
        // The legend's row takes the top of the plot: the y range grows above the data.
        let top = chart.above_legend((600, 400), (y0, y1));
        assert!(top > y1 * 1.2, "{top} vs {y1}");
        let unlabelled = LogLog {
            curves: vec![Curve {
                points: vec![(1.0, [1.0, 2.0, 3.0])],
                ..Curve::default()
            }],
            ..LogLog::default()
        };
        assert_eq!(unlabelled.above_legend((600, 400), (1.0, 3.0)), 3.0);
    }

    #[test]
    fn an_empty_chart_says_so() {
        let svg = LogLog::default().svg((300, 200)).unwrap();
        assert!(svg.contains("nothing to draw"));
    }
}
