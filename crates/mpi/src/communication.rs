//! The communication components a distributed design is composed with, built from the
//! network calibration: a MapReduce's shuffle ([`shuffle_model`]), the divide-and-conquer paper's exchange
//! ([`exchange_ns`]) and the matrix-multiplication paper's messages ([`message_ns`]), in ns like the block
//! models, and the notes that say what they assumed.

use perfcompose_core::model::Expr;
use perfcompose_core::term::Reduction;
use perfcompose_runtime::bench::PARAMETER;

use crate::mapreduce::{KEY_BYTES, VALUE_BYTES};
use crate::network::{Hockney, NetworkCalibration};

/// The component name the calibrated shuffle gets in the composed term.
pub const SHUFFLE_COMPONENT: &str = "network";

/// The time of one message of `bytes` under the calibration, ns: the eager line below
/// the eager limit, the rendezvous line above (`eager + [bytes > limit]·(bulk − eager)`).
pub fn message_ns(net: &NetworkCalibration, bytes: Expr) -> Expr {
    let line = |h: Hockney| {
        Expr::add(
            Expr::constant(h.alpha_s * 1e9),
            Expr::mul(Expr::constant(h.beta_s_per_byte * 1e9), bytes.clone()),
        )
    };
    let eager = line(net.hockney_eager);
    let bulk = line(net.hockney);
    let step = Expr::min(
        Expr::one(),
        Expr::floor(Expr::div(
            bytes.clone(),
            Expr::constant((net.eager_limit_bytes + 1) as f64),
        )),
    );
    Expr::add(eager.clone(), Expr::mul(step, Expr::sub(bulk, eager)))
}

/// The shuffle of a MapReduce over `processes` processes with collections of `keys`
/// keys, ns per job, as a model in the shuffle's `x` (the inputs per job when
/// `per_key=x`): what [`crate::mapreduce`] sends, with the calibrated message times,
/// and rank 0's reduction of what it receives (`reduce`, the reduce block's model).
///
/// - pairwise: `m − 1` collections of `16·keys` bytes to rank 0, and `m − 1` pairwise
///   reductions of `keys` keys there;
/// - local: the same messages, and `keys` per-key reductions of `m` values;
/// - global: each process sends `x/m · keys/m` values of 8 bytes to each of the `m − 1`
///   others (they exchange at once), then rank 0 receives `m − 1` shares of `16·keys/m`
///   bytes.
pub fn shuffle_model(
    reduction: Reduction,
    processes: usize,
    keys: usize,
    net: &NetworkCalibration,
    reduce: &Expr,
) -> Expr {
    let m = processes as f64;
    let others = Expr::constant(m - 1.0);
    let k = keys as f64;
    let at = |e: &Expr, x: f64| e.subst(PARAMETER, &Expr::constant(x));
    let pair = (KEY_BYTES + VALUE_BYTES) as f64;
    match reduction {
        Reduction::Pairwise => Expr::mul(
            others,
            Expr::add(message_ns(net, Expr::constant(pair * k)), at(reduce, k)),
        ),
        Reduction::Local => Expr::add(
            Expr::mul(others, message_ns(net, Expr::constant(pair * k))),
            Expr::mul(Expr::constant(k), at(reduce, m)),
        ),
        Reduction::Global => {
            let values = Expr::mul(
                Expr::constant(VALUE_BYTES as f64 * k / (m * m)),
                Expr::param(PARAMETER),
            );
            Expr::mul(
                others,
                Expr::add(
                    message_ns(net, values),
                    message_ns(net, Expr::constant(pair * k / m)),
                ),
            )
        }
    }
}

/// The row's note on a MapReduce's communication.
pub fn network_note(
    reduction: Reduction,
    processes: usize,
    keys: usize,
    net: &NetworkCalibration,
) -> String {
    let bytes = match reduction {
        Reduction::Pairwise | Reduction::Local => format!(
            "{} B per job ({} collection(s) of {keys} key-value pairs to rank 0)",
            (processes as u64 - 1) * (KEY_BYTES + VALUE_BYTES) * keys as u64,
            processes - 1
        ),
        Reduction::Global => format!(
            "x·{keys}·8·(m−1)/m B of values to the keys' owners and {} B of results to rank 0 per job (m = {processes})",
            (processes as u64 - 1) * (KEY_BYTES + VALUE_BYTES) * (keys / processes) as u64
        ),
    };
    format!(
        "reduction={}: {bytes}; messages timed with {}",
        reduction.name(),
        hockney_figures(net)
    )
}

/// The calibration's two Hockney lines, as a note names them.
fn hockney_figures(net: &NetworkCalibration) -> String {
    format!(
        "the network calibration of {} (eager ≤ {} B: α = {:.3e} s, β = {:.3e} s/B; above: α = {:.3e} s, β = {:.3e} s/B)",
        net.host,
        net.eager_limit_bytes,
        net.hockney_eager.alpha_s,
        net.hockney_eager.beta_s_per_byte,
        net.hockney.alpha_s,
        net.hockney.beta_s_per_byte,
    )
}

/// The divide-and-conquer paper's exchange of `x` words, `2·(l + x·g)`, in ns, with the calibrated `l`, `g`.
pub fn exchange_ns(net: &NetworkCalibration) -> Expr {
    Expr::mul(
        Expr::constant(2e9),
        Expr::add(
            Expr::constant(net.exchange.l_s),
            Expr::mul(
                Expr::constant(net.exchange.g_s_per_word),
                Expr::param(PARAMETER),
            ),
        ),
    )
}

/// The row's note on a dc's communication.
pub fn exchange_note(processes: usize, net: &NetworkCalibration) -> String {
    format!(
        "each of the {} levels exchanges the result with the partner across it, Ex(K) = 2·(l + K·g) with the divide-and-conquer paper's l = {:.3e} s and g = {:.3e} s per {}-byte word from the all-to-all of the network calibration of {}",
        processes.trailing_zeros(),
        net.exchange.l_s,
        net.exchange.g_s_per_word,
        net.exchange.word_bytes,
        net.host
    )
}

/// The row's note on a matmul's communication.
pub fn matmul_note(side: usize, net: &NetworkCalibration) -> String {
    format!(
        "each of the {side} iterations broadcasts a block of A along each row of the {side} × {side} mesh (half a broadcast on average, as the matrix-multiplication paper counts it) and rolls the blocks of B up the columns; messages of 8·(x/{side})² bytes timed with {}",
        hockney_figures(net)
    )
}
