//! The network parameters fitted from [`Raw`] measurements, as stored and printed.
//!
//! - **Hockney**, in two ranges: MPI libraries send small messages eagerly (copied into
//!   the receiver's buffers at once) and large ones by rendezvous (a handshake, then the
//!   bulk copy), and one line through both bends badly. The sizes' medians are split
//!   where two lines fit best ([`fit_hockney_piecewise`], relative residuals);
//!   `hockney_eager` is the line below the split, `hockney` the one above, which bulk
//!   transfers follow.
//! - **LogGP**: `o` is the send call of a small message, `g` the time between consecutive
//!   messages of a burst (the burst time less one round trip, over the gaps between its
//!   messages), `L` the one-byte message time less `2o`, and `G` the rendezvous range's
//!   time per byte.
//! - **The divide-and-conquer paper's `l` and `g`**: under a full all-to-all every process sends `K` words to
//!   each of the `P − 1` others and receives as many; with the paper's exchange cost
//!   `2·(l + K·g)` per partner, the all-to-all takes `2·(P − 1)·(l + K·g)`, so a straight
//!   line through `T(K) / (2·(P − 1))` gives `l` (intercept) and `g` (slope).
//!
//! The `[machine]` table binds `alpha` to the eager start-up and `beta` to the
//! rendezvous time per byte (one line that is right at both ends); how far that line is
//! from the measured sizes is recorded as `machine_max_relative_error`.

use perfcompose_core::comm::{
    fit_hockney_piecewise, fit_line, CalibrationError, LineFit, Timing, Weighting,
};
use serde::{Deserialize, Serialize};

use super::measure::{median, Raw, SMALL_MESSAGE, WORD_BYTES};

/// The version of the stored calibration's layout.
pub const NETWORK_VERSION: u32 = 1;

/// Hockney's `α + β·bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hockney {
    pub alpha_s: f64,
    pub beta_s_per_byte: f64,
}

impl Hockney {
    fn from_line(line: &LineFit) -> Hockney {
        Hockney {
            alpha_s: line.intercept,
            beta_s_per_byte: line.slope,
        }
    }

    /// The time of one message of `bytes`.
    pub fn time(&self, bytes: f64) -> f64 {
        self.alpha_s + self.beta_s_per_byte * bytes
    }
}

/// LogGP's parameters, seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogGp {
    #[serde(rename = "L_s")]
    pub latency_s: f64,
    pub o_s: f64,
    pub g_s: f64,
    #[serde(rename = "G_s_per_byte")]
    pub gap_per_byte_s: f64,
}

/// The divide-and-conquer paper's exchange parameters: `Ex(K) = 2·(l + K·g)` for `K` words.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    pub l_s: f64,
    pub g_s_per_word: f64,
    pub word_bytes: u64,
}

/// One ping-pong size: the median one-way time and every batch's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub bytes: u64,
    pub seconds: f64,
    pub samples: Vec<f64>,
}

/// One all-to-all size: the median of `T(K) / (2·(P − 1))` and every batch's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlltoallPoint {
    pub words_per_pair: u64,
    pub seconds: f64,
    pub samples: Vec<f64>,
}

/// How well the lines follow the measurements: the largest relative deviation of a
/// size's median from each.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitQuality {
    pub eager_max_relative_error: f64,
    pub rendezvous_max_relative_error: f64,
    pub machine_max_relative_error: f64,
    pub exchange_max_relative_error: f64,
}

/// A network calibration of one machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetworkCalibration {
    pub version: u32,
    pub host: String,
    pub processes: usize,
    pub mpi_library: String,
    /// Above the eager limit (bulk transfers).
    pub hockney: Hockney,
    /// Up to the eager limit.
    pub hockney_eager: Hockney,
    /// The largest size measured in the eager range.
    pub eager_limit_bytes: u64,
    pub loggp: LogGp,
    pub exchange: Exchange,
    /// flop/s of one core.
    pub flops_per_s: f64,
    pub fit: FitQuality,
    pub points: Vec<Point>,
    pub alltoall: Vec<AlltoallPoint>,
    /// What the user should know about the figures (clamped values and why).
    pub notes: Vec<String>,
}

impl NetworkCalibration {
    /// Fit the parameters to what rank 0 measured on a job of `processes` processes.
    pub fn from_measurements(
        raw: &Raw,
        host: String,
        processes: usize,
        mpi_library: String,
    ) -> Result<NetworkCalibration, CalibrationError> {
        let mut notes = Vec::new();
        let points: Vec<Point> = raw
            .pingpong
            .iter()
            .map(|(bytes, samples)| Point {
                bytes: *bytes,
                seconds: median(&mut samples.clone()),
                samples: samples.clone(),
            })
            .collect();
        // One sample per size, its median: a batch slowed by other work moves the
        // median of its size little, the lines not at all.
        let samples: Vec<(f64, f64)> = points.iter().map(|p| (p.bytes as f64, p.seconds)).collect();
        let pieces = fit_hockney_piecewise(&samples, Timing::OneWay, Weighting::Relative, 2)?;
        let (mut eager_line, rendezvous) = match pieces.pieces.as_slice() {
            [a, b] => (a.fit.clone(), b.clone()),
            _ => return Err(CalibrationError::TooFewSizes(points.len())),
        };
        // On a noisy machine the smallest sizes can come out in an order no line with a
        // positive start-up follows; the start-up is then taken as 0, and said.
        if eager_line.intercept < 0.0 {
            notes.push(format!(
                "the small messages' line has a negative start-up ({:.3e} s), taken as 0: the smallest sizes did not grow with their size (noise?)",
                eager_line.intercept
            ));
            eager_line.intercept = 0.0;
        }
        let eager_limit_bytes = points
            .iter()
            .map(|p| p.bytes)
            .filter(|&b| (b as f64) < rendezvous.from_bytes)
            .max()
            .unwrap_or(0);
        let hockney_eager = Hockney::from_line(&eager_line);
        let hockney = Hockney::from_line(&rendezvous.fit);
        if hockney.alpha_s < 0.0 {
            notes.push(format!(
                "the bulk-transfer line has a negative start-up ({:.3e} s): it holds above the eager limit of {eager_limit_bytes} B only",
                hockney.alpha_s
            ));
        }
        let machine = Hockney {
            alpha_s: hockney_eager.alpha_s,
            beta_s_per_byte: hockney.beta_s_per_byte,
        };
        let limit = eager_limit_bytes;
        let eager_err = deviation(&hockney_eager, points.iter().filter(|p| p.bytes <= limit));
        let rendezvous_err = deviation(&hockney, points.iter().filter(|p| p.bytes > limit));
        let machine_err = deviation(&machine, points.iter());

        // LogGP.
        let mut o = median(&mut raw.send_call.clone());
        if !o.is_finite() {
            notes.push("no send call was timed; LogGP's o is taken as 0".into());
            o = 0.0;
        }
        let small = points
            .iter()
            .find(|p| p.bytes == SMALL_MESSAGE)
            .map(|p| p.seconds)
            .unwrap_or_else(|| hockney_eager.time(SMALL_MESSAGE as f64));
        let burst = median(&mut raw.burst.clone());
        let mut g = if raw.burst_messages > 1 {
            (burst - 2.0 * small) / (raw.burst_messages - 1) as f64
        } else {
            f64::NAN
        };
        if !g.is_finite() {
            notes.push("no burst of messages was measured; LogGP's g is taken as 0".into());
            g = 0.0;
        } else if g < 0.0 {
            notes.push(format!(
                "a burst of {} messages took less than one round trip more than a single message; LogGP's g is taken as 0",
                raw.burst_messages
            ));
            g = 0.0;
        }
        let mut latency = hockney_eager.time(1.0) - 2.0 * o;
        if latency < 0.0 {
            notes.push(format!(
                "the send calls ({o:.3e} s each) take longer than half a one-byte message; LogGP's L is taken as 0"
            ));
            latency = 0.0;
        }
        let loggp = LogGp {
            latency_s: latency,
            o_s: o,
            g_s: g,
            gap_per_byte_s: hockney.beta_s_per_byte,
        };

        // The divide-and-conquer paper's exchange.
        let pairs = 2.0 * processes.saturating_sub(1).max(1) as f64;
        let alltoall: Vec<AlltoallPoint> = raw
            .alltoall
            .iter()
            .map(|(words, ts)| {
                let per: Vec<f64> = ts.iter().map(|t| t / pairs).collect();
                AlltoallPoint {
                    words_per_pair: *words,
                    seconds: median(&mut per.clone()),
                    samples: per,
                }
            })
            .collect();
        let ex_samples: Vec<(f64, f64)> = alltoall
            .iter()
            .map(|p| (p.words_per_pair as f64, p.seconds))
            .collect();
        let ex_line = fit_line(&ex_samples, Weighting::Relative)?;
        let mut l = ex_line.intercept;
        if l < 0.0 {
            notes.push(format!(
                "the all-to-all line has a negative start-up ({l:.3e} s); the divide-and-conquer paper's l is taken as 0"
            ));
            l = 0.0;
        }
        let exchange = Exchange {
            l_s: l,
            g_s_per_word: ex_line.slope.max(0.0),
            word_bytes: WORD_BYTES,
        };
        let exchange_err = alltoall
            .iter()
            .map(|p| {
                let fit = exchange.l_s + exchange.g_s_per_word * p.words_per_pair as f64;
                ((fit - p.seconds) / p.seconds).abs()
            })
            .fold(0.0, f64::max);

        Ok(NetworkCalibration {
            version: NETWORK_VERSION,
            host,
            processes,
            mpi_library,
            hockney,
            hockney_eager,
            eager_limit_bytes,
            loggp,
            exchange,
            flops_per_s: raw.flops_per_s,
            fit: FitQuality {
                eager_max_relative_error: eager_err,
                rendezvous_max_relative_error: rendezvous_err,
                machine_max_relative_error: machine_err,
                exchange_max_relative_error: exchange_err,
            },
            points,
            alltoall,
            notes,
        })
    }

    /// The single Hockney line of the `[machine]` table: the eager start-up and the
    /// bulk time per byte.
    pub fn machine_hockney(&self) -> Hockney {
        Hockney {
            alpha_s: self.hockney_eager.alpha_s,
            beta_s_per_byte: self.hockney.beta_s_per_byte,
        }
    }
}

/// The largest relative deviation of the points' medians from `line`.
fn deviation<'a>(line: &Hockney, points: impl Iterator<Item = &'a Point>) -> f64 {
    points
        .map(|p| ((line.time(p.bytes as f64) - p.seconds) / p.seconds).abs())
        .fold(0.0, f64::max)
}
