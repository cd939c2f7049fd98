//! The matrix-multiplication paper's example block: the product of two square blocks of doubles added to a
//! third, `C += A·B`, which each process of Fox's algorithm runs once per iteration
//! ([`crate::matmul`]). The registry holds it as `mm_block` next to the the pattern-composition paper kernels.
//!
//! A block of order `x` is a [`Data::Floats`] of `x²` values, row by row. The kernel
//! takes a batch `[A, B, C]` and gives the batch back with `C` updated, so that a
//! process keeps its blocks without copying them.

use std::sync::Arc;

use perfcompose_runtime::kernel::Inputs;
use perfcompose_runtime::{Data, DataKind, Kernel, KernelError, Op, Registry};

/// The kernel's name in the registry.
pub const MULTIPLY: &str = "mm_block";

/// A block of order `order` with values in [−1, 1) from `seed` (splitmix64).
pub fn random_block(order: usize, seed: u64) -> Vec<f64> {
    let mut state = seed ^ 0x5EED_0002;
    (0..order * order)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// The order of a square block of `len` values, if `len` is a square.
pub fn order_of(len: usize) -> Option<usize> {
    let n = (len as f64).sqrt().round() as usize;
    (n * n == len).then_some(n)
}

/// `c += a·b` for blocks of order `n` (row by row; the inner loop runs along rows of
/// `b` and `c`, which the compiler vectorises).
pub fn multiply_add(a: &[f64], b: &[f64], c: &mut [f64], n: usize) {
    assert!(
        a.len() == n * n && b.len() == n * n && c.len() == n * n,
        "blocks of order {n} need {} values each, got {}, {} and {}",
        n * n,
        a.len(),
        b.len(),
        c.len()
    );
    for (i, ci) in c.chunks_exact_mut(n).enumerate() {
        for (k, bk) in b.chunks_exact(n).enumerate() {
            let aik = a[i * n + k];
            for (cij, bkj) in ci.iter_mut().zip(bk) {
                *cij += aik * bkj;
            }
        }
    }
}

/// `[A, B, C]` → `[A, B, C + A·B]`.
fn multiply_batch(d: Data) -> Data {
    let Data::Batch(mut parts) = d else {
        panic!(
            "kernel `{MULTIPLY}` expects a batch [A, B, C], got {}",
            d.kind()
        );
    };
    let mut blocks: Vec<Vec<f64>> = Vec::with_capacity(3);
    for p in parts.drain(..) {
        match p {
            Data::Floats(v) => blocks.push(v),
            other => panic!(
                "kernel `{MULTIPLY}` expects three floating-point blocks, got {}",
                other.kind()
            ),
        }
    }
    let [a, b, mut c]: [Vec<f64>; 3] = blocks.try_into().unwrap_or_else(|v: Vec<_>| {
        panic!("kernel `{MULTIPLY}` expects 3 blocks, got {}", v.len())
    });
    let n = order_of(a.len()).unwrap_or_else(|| {
        panic!(
            "kernel `{MULTIPLY}`: {} values are not a square block",
            a.len()
        )
    });
    multiply_add(&a, &b, &mut c, n);
    Data::Batch(vec![Data::Floats(a), Data::Floats(b), Data::Floats(c)])
}

struct MultiplyAdd;

impl Kernel for MultiplyAdd {
    fn name(&self) -> &str {
        MULTIPLY
    }
    fn summary(&self) -> &str {
        "Fox's matrix multiplication (the matrix-multiplication paper): C += A·B on square blocks of doubles"
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Batch,
            output: DataKind::Batch,
            f: Arc::new(multiply_batch),
        }
    }
    fn size_meaning(&self) -> &str {
        "order of the blocks"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        Ok(Data::Batch(vec![
            Data::Floats(random_block(x, 2 * inputs.variant)),
            Data::Floats(random_block(x, 2 * inputs.variant + 1)),
            Data::Floats(vec![0.0; x * x]),
        ]))
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        24 * (x as u128) * (x as u128)
    }
    fn default_sizes(&self, _full: bool) -> Vec<usize> {
        vec![32, 48, 64, 96, 128, 192, 256]
    }
}

/// Add the matrix block to `registry`.
pub fn register(registry: &mut Registry) {
    registry.register(Arc::new(MultiplyAdd));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiply_add_is_the_textbook_product() {
        let n = 5;
        let a = random_block(n, 1);
        let b = random_block(n, 2);
        let mut c = vec![1.0; n * n];
        multiply_add(&a, &b, &mut c, n);
        for i in 0..n {
            for j in 0..n {
                let want: f64 = 1.0 + (0..n).map(|k| a[i * n + k] * b[k * n + j]).sum::<f64>();
                assert!((c[i * n + j] - want).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn blocks_are_reproducible_and_bounded() {
        assert_eq!(random_block(4, 7), random_block(4, 7));
        assert_ne!(random_block(4, 7), random_block(4, 8));
        assert!(random_block(16, 3).iter().all(|v| (-1.0..1.0).contains(v)));
        assert_eq!(order_of(49), Some(7));
        assert_eq!(order_of(50), None);
    }

    #[test]
    fn the_kernel_runs_on_its_own_input_and_keeps_its_operands() {
        let mut reg = Registry::empty();
        register(&mut reg);
        let k = reg.get(MULTIPLY).unwrap();
        let input = k.input(8, &Inputs::default()).unwrap();
        let Op::Block { f, .. } = k.op() else {
            panic!("a block")
        };
        let Data::Batch(parts) = f(input) else {
            panic!("a batch")
        };
        assert_eq!(parts.len(), 3);
        assert!(parts
            .iter()
            .all(|p| matches!(p, Data::Floats(v) if v.len() == 64)));
    }
}
