//! Canonical printing of terms: `pipe(tpool(4, qsort), seq(inc, nop))`.
//!
//! One space after each comma, keyword arguments in the grammar's order, `EXPR`
//! arguments in the model's canonical form. The output parses back to the same term.

use std::fmt::{self, Write};

use super::{Count, CountValue, Node, NodeKind, Term};

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            CountValue::Int(n) => write!(f, "{n}"),
            CountValue::Param(p) => f.write_str(p),
        }
    }
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_node(&mut s, self);
        f.write_str(&s)
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.root.fmt(f)
    }
}

fn write_list(out: &mut String, head: &str, items: &[Node]) {
    out.push_str(head);
    out.push('(');
    for (i, n) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_node(out, n);
    }
    out.push(')');
}

fn write_node(out: &mut String, n: &Node) {
    match &n.kind {
        NodeKind::Component(c) => out.push_str(c),
        NodeKind::Seq(v) => write_list(out, "seq", v),
        NodeKind::Pipe(v) => write_list(out, "pipe", v),
        NodeKind::Tpool { threads, body } => {
            let _ = write!(out, "tpool({threads}, ");
            write_node(out, body);
            out.push(')');
        }
        NodeKind::MapReduce(mr) => {
            out.push_str("mapreduce(");
            write_node(out, &mr.map);
            out.push_str(", ");
            write_node(out, &mr.reduce);
            let _ = write!(
                out,
                ", nodes={}, threads={}, keys={}, per_key={}",
                mr.nodes, mr.threads, mr.keys.expr, mr.per_key.expr
            );
            if let Some(s) = &mr.shuffle {
                let _ = write!(out, ", shuffle={}", s.name);
            }
            if let Some(r) = &mr.reduction {
                let _ = write!(out, ", reduction={}", r.value.name());
            }
            out.push(')');
        }
        NodeKind::Dc(dc) => {
            out.push_str("dc(");
            write_node(out, &dc.divide);
            out.push_str(", ");
            write_node(out, &dc.combine);
            out.push_str(", ");
            write_node(out, &dc.leaf);
            let _ = write!(out, ", procs={}, exchange={}", dc.procs, dc.exchange.name);
            if let Some(s) = &dc.size {
                let _ = write!(out, ", size={}", s.expr);
            }
            out.push(')');
        }
        NodeKind::Matmul(mm) => {
            out.push_str("matmul(");
            write_node(out, &mm.multiply);
            let _ = write!(
                out,
                ", procs={}, message={}, bcast={}",
                mm.procs,
                mm.message.name,
                mm.bcast.value.name()
            );
            if let Some(k) = &mm.segments {
                let _ = write!(out, ", segments={}", k.expr);
            }
            if let Some(b) = &mm.bytes {
                let _ = write!(out, ", bytes={}", b.expr);
            }
            out.push(')');
        }
    }
}
