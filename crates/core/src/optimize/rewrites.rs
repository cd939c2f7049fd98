//! The designs the pattern-composition paper's relational laws make comparable with a given one: its blocks in
//! order, cut into consecutive groups, each group a task pool of the `seq` of its blocks.
//! Law (iv) (`pipe(a, b) ≥ tpool(2, seq(a, b))`) compares a pipeline with the task pool
//! of its stages' `seq`; merging two neighbouring stages into one task pool, or splitting
//! one into two, are the same law applied to part of the pipeline; (i) lets the groups
//! nest either way. Every such design keeps the blocks' order, so it computes the same.

use crate::term::{Node, NodeKind, Term};

/// Most blocks whose every grouping is tried (`2^(n−1)` designs); past it, only the
/// design itself, one task pool of everything and one task pool per block.
pub const MAX_REWRITE_BLOCKS: usize = 12;

/// The blocks of a design in order: what its pipelines, `seq`s and task pools run, down
/// to components and the patterns that are not rearranged (MapReduce, divide and
/// conquer, matrix multiplication, written as they are). `None` when one of those holds
/// a `?` (its counts are the design's own).
pub fn blocks_of(term: &Term) -> Option<Vec<String>> {
    let mut out = Vec::new();
    collect(term, &term.root, &mut out).then_some(out)
}

fn collect(term: &Term, n: &Node, out: &mut Vec<String>) -> bool {
    match &n.kind {
        NodeKind::Component(c) => {
            out.push(c.clone());
            true
        }
        NodeKind::Seq(parts) | NodeKind::Pipe(parts) => parts.iter().all(|p| collect(term, p, out)),
        NodeKind::Tpool { body, .. } => collect(term, body, out),
        _ => {
            let text = term.text(n.span);
            if text.contains('?') {
                return false;
            }
            out.push(text.to_string());
            true
        }
    }
}

/// The rewritten designs of `term`, with `?` for every task pool's threads (the design
/// itself may be among them).
pub fn rewrite_designs(term: &Term) -> Vec<String> {
    let Some(blocks) = blocks_of(term) else {
        return Vec::new();
    };
    let n = blocks.len();
    if n == 0 {
        return Vec::new();
    }
    let group = |g: &[String]| match g {
        [one] => format!("tpool(?, {one})"),
        many => format!("tpool(?, seq({}))", many.join(", ")),
    };
    let design = |groups: Vec<&[String]>| {
        if groups.len() == 1 {
            group(groups[0])
        } else {
            format!(
                "pipe({})",
                groups.into_iter().map(group).collect::<Vec<_>>().join(", ")
            )
        }
    };
    if n > MAX_REWRITE_BLOCKS {
        return vec![
            design(vec![&blocks[..]]),
            design(blocks.chunks(1).collect()),
        ];
    }
    // Bit i of `cuts` set: a new group starts after block i.
    (0u32..1 << (n - 1))
        .map(|cuts| {
            let mut groups = Vec::new();
            let mut start = 0;
            for i in 0..n - 1 {
                if cuts & (1 << i) != 0 {
                    groups.push(&blocks[start..=i]);
                    start = i + 1;
                }
            }
            groups.push(&blocks[start..]);
            design(groups)
        })
        .collect()
}
