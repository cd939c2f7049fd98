//! What to write instead: the usage line of each pattern, for the parser's hints.

use crate::term::PATTERNS;

pub(super) fn usage(pattern: &str) -> String {
    match pattern {
        "mapreduce" => {
            "write mapreduce(map, reduce, nodes=1, threads=4, keys=768, per_key=x[, shuffle=NAME][, reduction=pairwise|local|global])"
                .into()
        }
        "dc" => "write dc(divide, combine, leaf, procs=8, exchange=NAME[, size=EXPR])".into(),
        "matmul" => "write matmul(multiply, procs=4, message=NAME, bcast=flat|binomial|pipeline[, segments=K][, bytes=EXPR])".into(),
        other => pattern_example(other),
    }
}

pub(super) fn pattern_example(pattern: &str) -> String {
    match pattern {
        "seq" => "write seq(a, b, ...) to run blocks one after the other".into(),
        "pipe" => "write pipe(a, b, ...) with one stage per argument".into(),
        "tpool" => "write tpool(4, qsort)".into(),
        "mapreduce" | "dc" | "matmul" => usage(pattern),
        _ => format!("patterns are {}", PATTERNS.join(", ")),
    }
}
