//! Measurements checked and reduced to what the modelers fit: one value per coordinate
//! (the chosen [`Measure`] of its repetitions), plus what the repetitions say about noise.

use std::collections::BTreeMap;

use super::{FitError, Measure};
use crate::measure::Point;

/// Smallest relative standard deviation of a mean we trust. Exact (noise-free) data would
/// otherwise make every numerical rounding look significant.
pub const MIN_RELATIVE_SIGMA: f64 = 1e-9;

/// One series ready for fitting.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// Coordinates, one `Vec` per point (in parameter order), distinct.
    pub coords: Vec<Vec<f64>>,
    /// The selected measure per point.
    pub y: Vec<f64>,
    /// The mean of the repetitions per point (Extra-P's multi-parameter line averaging
    /// needs it next to the selected measure).
    pub mean: Vec<f64>,
    /// Coefficient of variation of the repetitions per point (`None` with one repetition
    /// or a zero mean).
    pub cv: Vec<Option<f64>>,
    /// Pooled estimate of the *relative* variance of a point's value (the variance of a
    /// mean of `r` repetitions is `s²/r`) and its degrees of freedom; `None` without
    /// repetitions.
    pub rel_var: Option<(f64, usize)>,
}

impl Prepared {
    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Relative weights `1 / y²`, with values near zero floored so that a zero
    /// measurement does not get infinite weight.
    pub fn relative_weights(&self) -> Vec<f64> {
        let top = self.y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if top == 0.0 {
            return vec![1.0; self.y.len()];
        }
        let floor = (top * 1e-6).max(f64::MIN_POSITIVE);
        self.y
            .iter()
            .map(|v| {
                let v = v.abs().max(floor);
                1.0 / (v * v)
            })
            .collect()
    }

    /// Values of parameter `l` across the points.
    pub fn column(&self, l: usize) -> impl Iterator<Item = f64> + '_ {
        self.coords.iter().map(move |c| c[l])
    }
}

fn describe(coordinate: &[f64]) -> String {
    let parts: Vec<String> = coordinate.iter().map(|v| format!("{v}")).collect();
    format!("({})", parts.join(", "))
}

/// Check the points and reduce them. Errors name the offending coordinate.
pub fn prepare(
    parameters: &[String],
    points: &[Point],
    measure: Measure,
) -> Result<Prepared, FitError> {
    if points.is_empty() {
        return Err(FitError::NoPoints);
    }
    // Merge repeated coordinates (a file may list a point twice); keep first-seen order,
    // which Extra-P's line selection depends on.
    let mut order: Vec<Vec<f64>> = Vec::new();
    let mut merged: BTreeMap<Vec<u64>, Vec<f64>> = BTreeMap::new();
    for p in points {
        if p.coordinate.len() != parameters.len() {
            return Err(FitError::Dimension {
                coordinate: describe(&p.coordinate),
                got: p.coordinate.len(),
                expected: parameters.len(),
            });
        }
        for (name, &v) in parameters.iter().zip(&p.coordinate) {
            if !v.is_finite() || v < 0.0 {
                return Err(FitError::BadCoordinate {
                    parameter: name.clone(),
                    value: v,
                });
            }
        }
        for &v in &p.values {
            if !v.is_finite() {
                return Err(FitError::NonFinite {
                    coordinate: describe(&p.coordinate),
                    value: v,
                });
            }
            if v < 0.0 {
                return Err(FitError::Negative {
                    coordinate: describe(&p.coordinate),
                    value: v,
                });
            }
        }
        let key: Vec<u64> = p.coordinate.iter().map(|v| (v + 0.0).to_bits()).collect();
        let entry = merged.entry(key).or_insert_with(|| {
            order.push(p.coordinate.clone());
            Vec::new()
        });
        entry.extend_from_slice(&p.values);
    }
    let mut coords = Vec::with_capacity(order.len());
    let mut y = Vec::with_capacity(order.len());
    let mut mean = Vec::with_capacity(order.len());
    let mut cv = Vec::with_capacity(order.len());
    let (mut rel_var_sum, mut rel_var_dof, mut rel_var_points) = (0.0, 0usize, 0usize);
    for c in order {
        let key: Vec<u64> = c.iter().map(|v| (v + 0.0).to_bits()).collect();
        let values = &merged[&key];
        if values.is_empty() {
            return Err(FitError::EmptyPoint {
                coordinate: describe(&c),
            });
        }
        let r = values.len() as f64;
        let m = values.iter().sum::<f64>() / r;
        let var = if values.len() > 1 {
            values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (r - 1.0)
        } else {
            0.0
        };
        let point_cv = (values.len() > 1 && m > 0.0).then(|| var.sqrt() / m);
        if values.len() > 1 && m > 0.0 {
            // Relative variance of the mean at this point, pooled over points below.
            rel_var_sum += var / r / (m * m) * (r - 1.0);
            rel_var_dof += values.len() - 1;
            rel_var_points += 1;
        }
        y.push(measure.of(values));
        mean.push(m);
        cv.push(point_cv);
        coords.push(c);
    }
    let rel_var = (rel_var_points > 0).then(|| {
        let v = rel_var_sum / rel_var_dof as f64;
        (v.max(MIN_RELATIVE_SIGMA * MIN_RELATIVE_SIGMA), rel_var_dof)
    });
    Ok(Prepared {
        coords,
        y,
        mean,
        cv,
        rel_var,
    })
}

/// Groups of point indices that differ only in parameter `l` (a "line" along `l`),
/// each sorted by the value of `l`, in order of first appearance.
pub fn lines_along(data: &Prepared, l: usize) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Vec<u64>, Vec<usize>)> = Vec::new();
    let mut index: BTreeMap<Vec<u64>, usize> = BTreeMap::new();
    for (k, c) in data.coords.iter().enumerate() {
        let key: Vec<u64> = c
            .iter()
            .enumerate()
            .filter(|(m, _)| *m != l)
            .map(|(_, v)| v.to_bits())
            .collect();
        let g = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(k);
    }
    groups
        .into_iter()
        .map(|(_, mut ks)| {
            ks.sort_by(|&a, &b| data.coords[a][l].total_cmp(&data.coords[b][l]));
            ks
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn repeated_coordinates_merge_and_noise_is_pooled() {
        let pts = vec![
            Point::new(vec![1.0], vec![9.0, 11.0]),
            Point::new(vec![2.0], vec![20.0]),
            Point::new(vec![1.0], vec![10.0]),
        ];
        let d = prepare(&names(&["x"]), &pts, Measure::Mean).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d.y, vec![10.0, 20.0]);
        let (v, dof) = d.rel_var.unwrap();
        assert_eq!(dof, 2);
        // s² = 1, r = 3, m = 10: relative variance of the mean 1/3/100.
        assert!((v - 1.0 / 300.0).abs() < 1e-15);
        assert_eq!(d.cv[1], None);
    }

    #[test]
    fn bad_values_are_errors() {
        let p = names(&["x"]);
        for (pts, want) in [
            (vec![Point::new(vec![1.0], vec![f64::NAN])], "not a finite"),
            (vec![Point::new(vec![1.0], vec![-1.0])], "negative"),
            (vec![Point::new(vec![-1.0], vec![1.0])], "parameter"),
            (vec![Point::new(vec![1.0, 2.0], vec![1.0])], "coordinate"),
            (vec![Point::new(vec![1.0], vec![])], "no values"),
            (vec![], "no points"),
        ] {
            let e = prepare(&p, &pts, Measure::Mean).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn lines_group_by_the_other_coordinates() {
        let pts: Vec<Point> = [(1.0, 1.0), (2.0, 1.0), (1.0, 2.0), (3.0, 1.0)]
            .iter()
            .map(|&(x, y)| Point::new(vec![x, y], vec![1.0]))
            .collect();
        let d = prepare(&names(&["x", "y"]), &pts, Measure::Mean).unwrap();
        assert_eq!(lines_along(&d, 0), vec![vec![0, 1, 3], vec![2]]);
        assert_eq!(lines_along(&d, 1), vec![vec![0, 2], vec![1], vec![3]]);
    }
}
