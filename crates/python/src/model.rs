//! `perfcompose.Model`: a model expression (the language of components files and of
//! `predict`'s output), evaluated at one point ([`Expr::eval`], with its domain checks) or
//! over numpy arrays by the compiled batch evaluator ([`Expr::batch`]), without the GIL.
//!
//! The Python half broadcasts the arrays (numpy's rules) and hands over the parameters
//! that vary as contiguous float64 columns of one length and the others as numbers;
//! here every varying parameter is a lane of the batch, every number a point value; large
//! arrays are split between the cores. Where
//! the batch has no finite value, the point evaluation decides (NaN where it fails too).

use numpy::{PyArray1, PyReadonlyArray1};
use perfcompose_core::model::{parse_model_with, Batch, EvalError, Expr, Pairs};
use perfcompose_core::skeleton::StandardLibrary;
use pyo3::prelude::*;

use crate::{run, Failure};

/// Origin of a model's text in messages.
const ORIGIN: &str = "<model>";

/// Points below which one thread evaluates them all (a thread costs tens of µs to start).
const MIN_POINTS_PER_THREAD: usize = 1 << 16;

/// `batch` at `len` points, split into contiguous parts evaluated on the cores available
/// (the parts' results concatenated in order).
fn eval_split(
    batch: &Batch,
    point: &[(&str, f64)],
    columns: &[&[f64]],
    len: usize,
) -> Result<Vec<f64>, EvalError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(len / MIN_POINTS_PER_THREAD).max(1);
    if threads == 1 {
        let mut out = Vec::with_capacity(len);
        batch.eval(&Pairs(point), columns, len, &mut out)?;
        return Ok(out);
    }
    let chunk = len.div_ceil(threads);
    let parts: Vec<Result<Vec<f64>, EvalError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start, end) = (t * chunk, ((t + 1) * chunk).min(len));
                let part: Vec<&[f64]> = columns.iter().map(|c| &c[start..end]).collect();
                s.spawn(move || {
                    let mut out = Vec::with_capacity(end - start);
                    batch
                        .eval(&Pairs(point), &part, end - start, &mut out)
                        .map(|()| out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut out = Vec::with_capacity(len);
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}

#[pyclass(frozen, module = "perfcompose._native")]
pub struct Model {
    expr: Expr,
}

impl Model {
    /// Every name in `given` is a parameter of the model, and every parameter is given.
    fn check_names<'a>(&self, given: impl Iterator<Item = &'a str> + Clone) -> Result<(), Failure> {
        let params = self.expr.params();
        if let Some(n) = given.clone().find(|n| !params.contains(*n)) {
            let known: Vec<&str> = params.iter().map(String::as_str).collect();
            return Err(Failure::Plain(format!(
                "`{n}` is not a parameter of the model (its parameters: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
        if let Some(p) = params
            .iter()
            .find(|p| !given.clone().any(|n| n == p.as_str()))
        {
            return Err(Failure::Plain(format!("no value for the parameter `{p}`")));
        }
        Ok(())
    }
}

#[pymethods]
impl Model {
    #[new]
    fn new(py: Python<'_>, text: String) -> PyResult<Model> {
        run(py, move || {
            Ok(Model {
                expr: parse_model_with(ORIGIN, &text, &StandardLibrary)?,
            })
        })
    }

    /// The model's parameters, sorted.
    #[getter]
    fn parameters(&self) -> Vec<String> {
        self.expr.params().into_iter().collect()
    }

    /// The model in Extra-P's syntax where it has one.
    fn extrap(&self) -> String {
        self.expr.extrap()
    }

    /// The value at one point (every parameter a number), with the point evaluation's
    /// domain checks: a value that is not a finite real number is an error.
    fn value(&self, py: Python<'_>, point: Vec<(String, f64)>) -> PyResult<f64> {
        run(py, || {
            self.check_names(point.iter().map(|(n, _)| n.as_str()))?;
            let pairs: Vec<(&str, f64)> = point.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            self.expr
                .eval(&Pairs(&pairs))
                .map_err(|e| Failure::chain(&e))
        })
    }

    /// The values at `len` points: `columns` are the varying parameters (each `len`
    /// long, contiguous), `scalars` the others. Points where the model is not a finite
    /// real number give NaN or an infinity.
    fn batch<'py>(
        &self,
        py: Python<'py>,
        columns: Vec<(String, PyReadonlyArray1<'py, f64>)>,
        scalars: Vec<(String, f64)>,
        len: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut names = Vec::with_capacity(columns.len());
        let mut slices = Vec::with_capacity(columns.len());
        for (n, c) in &columns {
            let s = c.as_slice().map_err(|e| {
                Failure::Plain(format!("`{n}`: {e} (give a contiguous array)")).into_py(py)
            })?;
            if s.len() != len {
                return Err(Failure::Plain(format!(
                    "`{n}` has {} values, the points are {len}",
                    s.len()
                ))
                .into_py(py));
            }
            names.push(n.clone());
            slices.push(s);
        }
        let out = run(py, || {
            let given = names.iter().chain(scalars.iter().map(|(n, _)| n));
            self.check_names(given.map(String::as_str))?;
            let batch = self.expr.batch(&names);
            let pairs: Vec<(&str, f64)> = scalars.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            let mut out =
                eval_split(&batch, &pairs, &slices, len).map_err(|e| Failure::chain(&e))?;
            // The batch gives up (NaN) where the point evaluation may still have a value
            // (a sum whose bounds vary between points): those points are evaluated one
            // by one, so that arrays and single points agree.
            let mut point = pairs.clone();
            let fixed = point.len();
            point.extend(names.iter().map(|n| (n.as_str(), 0.0)));
            for (k, v) in out.iter_mut().enumerate().filter(|(_, v)| !v.is_finite()) {
                for (slot, column) in point[fixed..].iter_mut().zip(&slices) {
                    slot.1 = column[k];
                }
                if let Ok(exact) = self.expr.eval(&Pairs(&point)) {
                    *v = exact;
                }
            }
            Ok(out)
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    fn __str__(&self) -> String {
        self.expr.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Model({:?})", self.expr.to_string())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Model>()
            .is_ok_and(|o| o.get().expr == self.expr)
    }
}
