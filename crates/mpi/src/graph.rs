//! The divide-and-conquer paper's example for hypercube divide and conquer: the connected components of a
//! graph, as three blocks the runtime's registry holds next to the the pattern-composition paper kernels.
//!
//! A graph has [`NODES`] nodes and `x` edges, an edge list `[u0, v0, u1, v1, …]`
//! ([`Data::Ints`]); a labelling gives every node the smallest node of its component.
//!
//! - `cc_divide`: split an edge list in two halves (a [`Data::Batch`] of two lists);
//!   `x` = edges.
//! - `cc_leaf`: the labelling of a graph's edges, by union–find; `x` = edges.
//! - `cc_combine`: merge two labellings of the same nodes (two edge subsets' components)
//!   into that of their union; `x` = nodes.

use std::sync::Arc;

use perfcompose_runtime::kernel::Inputs;
use perfcompose_runtime::{Data, DataKind, Kernel, KernelError, Op, Registry};

/// Nodes of the graphs the blocks work on (the paper's root vector is one word per node).
pub const NODES: usize = 1 << 15;

/// Deterministic pseudo-random numbers (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `edges` random edges among `nodes` nodes, from `seed`.
pub fn random_edges(nodes: usize, edges: usize, seed: u64) -> Vec<i32> {
    let mut rng = Rng(seed ^ 0xC0FF_EE00);
    let n = nodes.max(1) as u64;
    (0..2 * edges).map(|_| (rng.next() % n) as i32).collect()
}

fn find(parent: &mut [u32], mut i: u32) -> u32 {
    while parent[i as usize] != i {
        let grand = parent[parent[i as usize] as usize];
        parent[i as usize] = grand;
        i = grand;
    }
    i
}

/// Join the components of `a` and `b`; the smaller root becomes the root.
fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi as usize] = lo;
    }
}

/// Every node's smallest component member.
fn labels(parent: &mut [u32]) -> Vec<i32> {
    (0..parent.len() as u32)
        .map(|i| find(parent, i) as i32)
        .collect()
}

/// The labelling of the graph of `nodes` nodes with edge list `edges`.
pub fn components(nodes: usize, edges: &[i32]) -> Vec<i32> {
    let mut parent: Vec<u32> = (0..nodes as u32).collect();
    for e in edges.chunks_exact(2) {
        union(&mut parent, e[0] as u32, e[1] as u32);
    }
    labels(&mut parent)
}

/// The labelling of the union of two labellings' relations.
pub fn merge(a: &[i32], b: &[i32]) -> Vec<i32> {
    let mut parent: Vec<u32> = a.iter().map(|&l| l as u32).collect();
    for (i, &l) in b.iter().enumerate() {
        union(&mut parent, i as u32, l as u32);
    }
    labels(&mut parent)
}

/// Split an edge list into its first and second half (whole edges).
pub fn split(edges: &[i32]) -> (Vec<i32>, Vec<i32>) {
    let half = (edges.len() / 2) & !1;
    (edges[..half].to_vec(), edges[half..].to_vec())
}

fn ints(kernel: &str, d: Data) -> Vec<i32> {
    match d {
        Data::Ints(v) => v,
        other => panic!("kernel `{kernel}` expects integers, got {}", other.kind()),
    }
}

fn edges_input(x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
    Ok(Data::Ints(random_edges(NODES, x, inputs.variant)))
}

fn edge_sizes() -> Vec<usize> {
    (14..=19).map(|e| 1usize << e).collect()
}

struct Divide;
struct Leaf;
struct Combine;

impl Kernel for Divide {
    fn name(&self) -> &str {
        "cc_divide"
    }
    fn summary(&self) -> &str {
        "connected components (the divide-and-conquer paper's example): split an edge list in two halves"
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Ints,
            output: DataKind::Batch,
            f: Arc::new(|d| {
                let (a, b) = split(&ints("cc_divide", d));
                Data::Batch(vec![Data::Ints(a), Data::Ints(b)])
            }),
        }
    }
    fn size_meaning(&self) -> &str {
        "edges"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        edges_input(x, inputs)
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        8 * x as u128
    }
    fn default_sizes(&self, _full: bool) -> Vec<usize> {
        edge_sizes()
    }
}

impl Kernel for Leaf {
    fn name(&self) -> &str {
        "cc_leaf"
    }
    fn summary(&self) -> &str {
        "connected components (the divide-and-conquer paper's example): label a graph's nodes by union-find over its edges"
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Ints,
            output: DataKind::Ints,
            f: Arc::new(|d| Data::Ints(components(NODES, &ints("cc_leaf", d)))),
        }
    }
    fn size_meaning(&self) -> &str {
        "edges (of a graph of 32,768 nodes)"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        edges_input(x, inputs)
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        8 * x as u128
    }
    fn default_sizes(&self, _full: bool) -> Vec<usize> {
        edge_sizes()
    }
}

impl Kernel for Combine {
    fn name(&self) -> &str {
        "cc_combine"
    }
    fn summary(&self) -> &str {
        "connected components (the divide-and-conquer paper's example): merge two labellings of the same nodes"
    }
    fn op(&self) -> Op {
        Op::Block {
            input: DataKind::Batch,
            output: DataKind::Ints,
            f: Arc::new(|d| match d {
                Data::Batch(mut parts) if parts.len() == 2 => {
                    let b = ints("cc_combine", parts.pop().expect("two parts"));
                    let a = ints("cc_combine", parts.pop().expect("two parts"));
                    Data::Ints(merge(&a, &b))
                }
                other => panic!(
                    "kernel `cc_combine` expects a batch of two labellings, got {}",
                    other.kind()
                ),
            }),
        }
    }
    fn size_meaning(&self) -> &str {
        "nodes"
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        // Two labellings of x nodes, each of x random edges: past the threshold of a
        // giant component, as the halves of the graphs divide and conquer works on
        // (2^16 edges and more on 2^15 nodes).
        let a = components(x, &random_edges(x, x, 2 * inputs.variant));
        let b = components(x, &random_edges(x, x, 2 * inputs.variant + 1));
        Ok(Data::Batch(vec![Data::Ints(a), Data::Ints(b)]))
    }
    fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
        8 * x as u128
    }
    fn default_sizes(&self, _full: bool) -> Vec<usize> {
        (12..=17).map(|e| 1usize << e).collect()
    }
}

/// Add the connected-components blocks to `registry`.
pub fn register(registry: &mut Registry) {
    registry.register(Arc::new(Divide));
    registry.register(Arc::new(Leaf));
    registry.register(Arc::new(Combine));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_of_a_small_graph() {
        // 0-1, 2-3, 3-4; 5 alone.
        let edges = [0, 1, 3, 2, 4, 3];
        assert_eq!(components(6, &edges), vec![0, 0, 2, 2, 2, 5]);
    }

    #[test]
    fn merged_halves_label_as_the_whole_graph() {
        let edges = random_edges(1000, 700, 3);
        let (a, b) = split(&edges);
        assert_eq!(a.len() + b.len(), edges.len());
        assert_eq!(a.len() % 2, 0);
        let whole = components(1000, &edges);
        assert_eq!(merge(&components(1000, &a), &components(1000, &b)), whole);
        // Four quarters, merged as a hypercube of two levels would.
        let (a1, a2) = split(&a);
        let (b1, b2) = split(&b);
        let left = merge(&components(1000, &a1), &components(1000, &a2));
        let right = merge(&components(1000, &b1), &components(1000, &b2));
        assert_eq!(merge(&left, &right), whole);
        assert_eq!(merge(&right, &left), whole);
    }

    #[test]
    fn the_blocks_run_on_their_own_inputs() {
        let mut reg = Registry::empty();
        register(&mut reg);
        for name in ["cc_divide", "cc_leaf", "cc_combine"] {
            let k = reg.get(name).unwrap();
            let x = k.default_sizes(false)[0];
            let input = k.input(x, &Inputs::default()).unwrap();
            let Op::Block { f, .. } = k.op() else {
                panic!("{name} is a block")
            };
            match f(input) {
                Data::Ints(v) => assert_eq!(v.len(), if name == "cc_leaf" { NODES } else { x }),
                Data::Batch(parts) => assert_eq!(parts.len(), 2),
                other => panic!("{name}: {}", other.kind()),
            }
        }
    }
}
