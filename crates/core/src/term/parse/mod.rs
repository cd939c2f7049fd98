//! The term parser: hand-written recursive descent over an on-demand lexer.
//!
//! Hand-written because the messages are the product here: each error names what was
//! expected, points at the offending token and, where a typical mistake is behind it,
//! says how to write it instead. `EXPR` arguments (`keys=x / 2`) are cut out of the
//! source at the next top-level `,` or `)` and handed to the model parser; its errors
//! are re-homed into the term with [`Diagnostic::embed`].

use super::{closest, Count, CountValue, ExprArg, Name, Node, NodeKind, Term, PATTERNS};
use crate::diag::{Diagnostic, Span};
use crate::model::{parse_model_with, Functions, NoFunctions};

mod hints;
mod keywords;

use hints::pattern_example;

/// Deepest nesting of patterns accepted. Parsing, composing, evaluating and printing
/// recurse once per level; at this depth a release build needs about 1.25 MiB of stack,
/// inside the 2 MiB of a test thread. (The benchmark's 1,000 patterns nest about 860
/// levels deep.)
pub const MAX_TERM_DEPTH: usize = 1000;

/// Parse a term; errors name `origin` (`<term>` or a file path).
///
/// ```
/// use perfcompose_core::term::parse_term;
/// let t = parse_term("<term>", "pipe(tpool(4, qsort), seq(inc, nop))").unwrap();
/// assert_eq!(t.root.to_string(), "pipe(tpool(4, qsort), seq(inc, nop))");
/// ```
pub fn parse_term(origin: &str, source: &str) -> Result<Term, Diagnostic> {
    parse_term_with(origin, source, &NoFunctions)
}

/// Parse a term whose `EXPR` arguments may call the functions of `library`.
pub fn parse_term_with(
    origin: &str,
    source: &str,
    library: &dyn Functions,
) -> Result<Term, Diagnostic> {
    parse(origin, source, library, None)
}

/// A thread count left open in a design (`tpool(?, a)`), for `perfcompose optimize`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hole {
    /// The parameter the hole stands for in the parsed term ([`hole_name`]).
    pub name: String,
    /// Where the `?` is.
    pub span: Span,
}

/// The parameter name of the `i`-th hole (from 0): `?1`, `?2`, ..., names no user can
/// write.
pub fn hole_name(i: usize) -> String {
    format!("?{}", i + 1)
}

/// Parse a design whose thread counts may be `?` (a task pool's, a MapReduce's
/// `threads=`): each becomes the parameter [`hole_name`] of its order, returned with
/// its span.
///
/// ```
/// use perfcompose_core::term::parse_design;
/// let (t, holes) = parse_design("<term>", "pipe(tpool(?, a), tpool(?, b))").unwrap();
/// assert_eq!(holes.len(), 2);
/// assert_eq!(t.root.to_string(), "pipe(tpool(?1, a), tpool(?2, b))");
/// ```
pub fn parse_design(origin: &str, source: &str) -> Result<(Term, Vec<Hole>), Diagnostic> {
    let mut holes = Vec::new();
    let t = parse(origin, source, &NoFunctions, Some(&mut holes))?;
    Ok((t, holes))
}

fn parse(
    origin: &str,
    source: &str,
    library: &dyn Functions,
    holes: Option<&mut Vec<Hole>>,
) -> Result<Term, Diagnostic> {
    let mut p = Parser {
        origin,
        src: source,
        pos: 0,
        depth: 0,
        library,
        holes,
    };
    let first = p.peek();
    if first.kind == Tok::End {
        return Err(p
            .error(Span::new(0, 0), "the term is empty")
            .with_hint("write a component name or a pattern, e.g. pipe(tpool(4, qsort), inc)"));
    }
    let root = p.term()?;
    let rest = p.peek();
    if rest.kind != Tok::End {
        let hint = if rest.kind == Tok::RParen {
            "there is one `)` too many".to_string()
        } else {
            "a term is one component or one pattern; join several with seq(...) or pipe(...)"
                .to_string()
        };
        return Err(p
            .error(
                rest.span,
                format!(
                    "unexpected {} after the end of the term",
                    rest.kind.describe()
                ),
            )
            .with_hint(hint));
    }
    Ok(Term {
        origin: origin.to_string(),
        source: source.to_string(),
        root,
    })
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    /// A numeric literal, as written.
    Number(String),
    LParen,
    RParen,
    Comma,
    Eq,
    Other(char),
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("`{n}`"),
            Tok::Number(n) => format!("number `{n}`"),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Eq => "`=`".into(),
            Tok::Other(c) => format!("`{c}`"),
            Tok::End => "the end of the term".into(),
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    kind: Tok,
    span: Span,
}

struct Parser<'a> {
    origin: &'a str,
    src: &'a str,
    pos: usize,
    depth: usize,
    library: &'a dyn Functions,
    /// Where `?` counts go when they are allowed (a design for `optimize`).
    holes: Option<&'a mut Vec<Hole>>,
}

impl Parser<'_> {
    fn error(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.origin, self.src, span, msg)
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        let b = self.src.as_bytes();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    }

    /// The token at the current position, without consuming it.
    fn peek(&self) -> Token {
        self.token_at(self.pos)
    }

    fn token_at(&self, from: usize) -> Token {
        let b = self.src.as_bytes();
        let i = self.skip_ws(from);
        if i >= b.len() {
            // Point at the last character so a caret is visible.
            let n = self.src.len();
            let last = self.src.chars().last().map_or(0, char::len_utf8);
            return Token {
                kind: Tok::End,
                span: Span::new(n - last, n),
            };
        }
        let c = b[i];
        let one = |k| Token {
            kind: k,
            span: Span::new(i, i + 1),
        };
        match c {
            b'(' => one(Tok::LParen),
            b')' => one(Tok::RParen),
            b',' => one(Tok::Comma),
            b'=' => one(Tok::Eq),
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                Token {
                    kind: Tok::Name(self.src[i..j].to_string()),
                    span: Span::new(i, j),
                }
            }
            c if c.is_ascii_digit() || c == b'.' => {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'.') {
                    j += 1;
                }
                Token {
                    kind: Tok::Number(self.src[i..j].to_string()),
                    span: Span::new(i, j),
                }
            }
            _ => {
                let ch = self.src[i..].chars().next().unwrap_or('?');
                Token {
                    kind: Tok::Other(ch),
                    span: Span::new(i, i + ch.len_utf8()),
                }
            }
        }
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.kind != Tok::End {
            self.pos = t.span.end;
        }
        t
    }

    fn term(&mut self) -> Result<Node, Diagnostic> {
        let t = self.peek();
        match &t.kind {
            Tok::Name(name) => {
                self.bump();
                if self.peek().kind == Tok::LParen {
                    return self.call(name, t.span);
                }
                if PATTERNS.contains(&name.as_str()) {
                    return Err(self
                        .error(t.span, format!("`{name}` is a pattern and needs arguments"))
                        .with_hint(pattern_example(name)));
                }
                Ok(Node {
                    kind: NodeKind::Component(name.clone()),
                    span: t.span,
                })
            }
            Tok::Number(n) => Err(self
                .error(
                    t.span,
                    format!("expected a term (a component or a pattern), found number `{n}`"),
                )
                .with_hint("counts go inside a pattern, e.g. tpool(4, qsort)")),
            Tok::End => Err(self
                .error(t.span, "expected a term, found the end of the term")
                .with_hint("the term stops in the middle; an argument is missing")),
            other => Err(self.error(
                t.span,
                format!(
                    "expected a term (a component or a pattern), found {}",
                    other.describe()
                ),
            )),
        }
    }

    fn call(&mut self, name: &str, name_span: Span) -> Result<Node, Diagnostic> {
        if !PATTERNS.contains(&name) {
            let hint = match closest(name, PATTERNS.iter().copied()) {
                Some(p) => format!(
                    "did you mean `{p}`? (a component is written without parentheses: `{name}`)"
                ),
                None => format!(
                    "patterns are {}; a component is written without parentheses: `{name}`",
                    PATTERNS.join(", ")
                ),
            };
            return Err(self
                .error(name_span, format!("unknown pattern `{name}`"))
                .with_hint(hint));
        }
        self.depth += 1;
        if self.depth > MAX_TERM_DEPTH {
            return Err(self
                .error(
                    name_span,
                    format!("term nested more than {MAX_TERM_DEPTH} levels deep"),
                )
                .with_hint("flatten it: pipe and seq take any number of arguments"));
        }
        let open = self.bump(); // `(`
        let node = match name {
            "seq" | "pipe" => self.list(name, name_span, open.span),
            "tpool" => self.tpool(name_span, open.span),
            "mapreduce" => self.mapreduce(name_span, open.span),
            "matmul" => self.matmul(name_span, open.span),
            _ => self.dc(name_span, open.span),
        };
        self.depth -= 1;
        node
    }

    /// After an argument: `,` (then more, or a trailing `)`) or `)`.
    /// Returns `Some(close span)` at the end of the list.
    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    fn separator(&mut self, name: &str, open: Span) -> Result<Option<Span>, Diagnostic> {
        let t = self.bump();
        match t.kind {
            Tok::Comma => {
                if self.peek().kind == Tok::RParen {
                    return Ok(Some(self.bump().span));
                }
                Ok(None)
            }
            Tok::RParen => Ok(Some(t.span)),
            Tok::End => {
                let (_, col) = crate::diag::line_col(self.src, open.start);
                Err(self
                    .error(t.span, "expected `,` or `)`, found the end of the term")
                    .with_hint(format!(
                        "a `)` is missing: `{name}(` at column {col} is not closed"
                    )))
            }
            other => Err(self
                .error(
                    t.span,
                    format!(
                        "expected `,` or `)` in `{name}(...)`, found {}",
                        other.describe()
                    ),
                )
                .with_hint("arguments are separated by commas")),
        }
    }

    /// True if the next tokens are `NAME =`.
    fn at_keyword(&self) -> Option<Token> {
        let t = self.peek();
        if matches!(t.kind, Tok::Name(_)) && self.token_at(t.span.end).kind == Tok::Eq {
            Some(t)
        } else {
            None
        }
    }

    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    fn list(&mut self, name: &str, name_span: Span, open: Span) -> Result<Node, Diagnostic> {
        let mut items = Vec::new();
        if self.peek().kind == Tok::RParen {
            let close = self.bump();
            let what = if name == "pipe" { "stage" } else { "term" };
            return Err(self
                .error(close.span, format!("`{name}` needs at least one {what}"))
                .with_hint(pattern_example(name)));
        }
        loop {
            if let Some(k) = self.at_keyword() {
                return Err(self
                    .error(k.span, format!("`{name}` takes no keyword arguments"))
                    .with_hint(pattern_example(name)));
            }
            items.push(self.term()?);
            if let Some(close) = self.separator(name, open)? {
                let kind = if name == "seq" {
                    NodeKind::Seq(items)
                } else {
                    NodeKind::Pipe(items)
                };
                return Ok(Node {
                    kind,
                    span: name_span.join(close),
                });
            }
        }
    }

    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    fn tpool(&mut self, name_span: Span, open: Span) -> Result<Node, Diagnostic> {
        if let Some(k) = self.at_keyword() {
            return Err(self
                .error(k.span, "`tpool` takes no keyword arguments")
                .with_hint("write tpool(4, qsort)"));
        }
        let first = self.peek();
        if first.kind == Tok::RParen {
            return Err(self
                .error(first.span, "`tpool` needs a thread count and a term")
                .with_hint("write tpool(4, qsort)"));
        }
        // `tpool(qsort, 4)`: the arguments swapped.
        if let Tok::Name(n) = &first.kind {
            if self.token_at(first.span.end).kind == Tok::LParen {
                return Err(self
                    .error(
                        first.span,
                        "the first argument of `tpool` is the thread count",
                    )
                    .with_hint(format!("write tpool(4, {n}(...))")));
            }
        }
        let threads = self.count("tpool", "thread count")?;
        if threads.as_int() == Some(0) {
            return Err(self
                .error(threads.span, "a task pool needs at least one thread")
                .with_hint("write tpool(n, t) with n >= 1; tpool(1, t) models t on one worker"));
        }
        let sep = self.bump();
        match sep.kind {
            Tok::Comma => {}
            Tok::RParen => {
                return Err(self
                    .error(sep.span, "`tpool` needs a term after the thread count")
                    .with_hint(format!(
                        "write tpool({}, qsort)",
                        self.src
                            .get(threads.span.start..threads.span.end)
                            .unwrap_or("4")
                    )))
            }
            other => {
                return Err(self
                    .error(
                        sep.span,
                        format!(
                            "expected `,` after the thread count, found {}",
                            other.describe()
                        ),
                    )
                    .with_hint("write tpool(4, qsort)"))
            }
        }
        let body = self.term()?;
        let close = self.bump();
        match close.kind {
            Tok::RParen => Ok(Node {
                kind: NodeKind::Tpool {
                    threads,
                    body: Box::new(body),
                },
                span: name_span.join(close.span),
            }),
            Tok::Comma => Err(self
                .error(close.span, "`tpool` takes exactly two arguments")
                .with_hint("to run several blocks in each task, write tpool(4, seq(a, b))")),
            Tok::End => {
                let (_, col) = crate::diag::line_col(self.src, open.start);
                Err(self
                    .error(close.span, "expected `)`, found the end of the term")
                    .with_hint(format!(
                        "a `)` is missing: `tpool(` at column {col} is not closed"
                    )))
            }
            other => Err(self.error(
                close.span,
                format!("expected `)` closing `tpool`, found {}", other.describe()),
            )),
        }
    }

    /// A count: a positive integer or a parameter name.
    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    fn count(&mut self, pattern: &str, what: &str) -> Result<Count, Diagnostic> {
        let t = self.peek();
        let hint = || {
            format!(
                "the {what} of `{pattern}` is a positive integer or a parameter name (e.g. 4 or n)"
            )
        };
        match &t.kind {
            Tok::Number(text) => {
                self.bump();
                match text.parse::<u64>() {
                    Ok(n) => Ok(Count {
                        value: CountValue::Int(n),
                        span: t.span,
                    }),
                    Err(_) => Err(self
                        .error(t.span, format!("`{text}` is not a valid {what}"))
                        .with_hint(hint())),
                }
            }
            Tok::Name(n) => {
                if self.token_at(t.span.end).kind == Tok::LParen {
                    return Err(self
                        .error(
                            t.span,
                            format!("expected the {what} of `{pattern}`, found a pattern"),
                        )
                        .with_hint(hint()));
                }
                self.bump();
                Ok(Count {
                    value: CountValue::Param(n.clone()),
                    span: t.span,
                })
            }
            Tok::Other('?') => {
                self.bump();
                let thread_count = pattern == "tpool" || what == "threads";
                match self.holes.as_deref_mut() {
                    Some(holes) if thread_count => {
                        let name = hole_name(holes.len());
                        holes.push(Hole {
                            name: name.clone(),
                            span: t.span,
                        });
                        Ok(Count {
                            value: CountValue::Param(name),
                            span: t.span,
                        })
                    }
                    Some(_) => Err(self
                        .error(t.span, format!("`?` cannot stand for the {what} of `{pattern}`"))
                        .with_hint("`?` marks a thread count to choose: tpool(?, a) or mapreduce(..., threads=?)")),
                    None => Err(self
                        .error(t.span, format!("`?` leaves the {what} of `{pattern}` open"))
                        .with_hint("`perfcompose optimize` chooses thread counts marked `?`; here give a number or a parameter name")),
                }
            }
            other => Err(self
                .error(
                    t.span,
                    format!(
                        "expected the {what} of `{pattern}`, found {}",
                        other.describe()
                    ),
                )
                .with_hint(hint())),
        }
    }

    /// A model expression: everything up to the next top-level `,` or `)`.
    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    fn expr_arg(&mut self, key: &str) -> Result<ExprArg, Diagnostic> {
        let b = self.src.as_bytes();
        let start = self.skip_ws(self.pos);
        let mut i = start;
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'(' => depth += 1,
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                b',' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        let mut end = i;
        while end > start && b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        if end == start {
            let t = self.token_at(start);
            return Err(self
                .error(t.span, format!("`{key}=` needs a value"))
                .with_hint(format!("write e.g. {key}=768 or {key}=x / 2")));
        }
        let text = &self.src[start..end];
        let expr = parse_model_with(self.origin, text, self.library)
            .map_err(|d| d.embed(self.origin, self.src, start))?;
        self.pos = end;
        Ok(ExprArg {
            expr,
            span: Span::new(start, end),
        })
    }

    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    fn name_arg(&mut self, key: &str) -> Result<Name, Diagnostic> {
        let (what, hint) = if key == "reduction" {
            (
                "a reduction variant",
                "write reduction=pairwise, reduction=local or reduction=global".to_string(),
            )
        } else {
            ("a component name", format!("write {key}=NAME"))
        };
        let t = self.peek();
        match &t.kind {
            Tok::Name(n) if self.token_at(t.span.end).kind != Tok::LParen => {
                self.bump();
                Ok(Name {
                    name: n.clone(),
                    span: t.span,
                })
            }
            Tok::Name(_) if key == "reduction" => Err(self
                .error(t.span, "`reduction=` names a variant, not a pattern")
                .with_hint(hint)),
            Tok::Name(_) => Err(self
                .error(t.span, format!("`{key}=` names a component, not a pattern"))
                .with_hint(format!(
                    "write {key}=NAME with NAME defined in the components file"
                ))),
            other => Err(self
                .error(
                    t.span,
                    format!("expected {what} after `{key}=`, found {}", other.describe()),
                )
                .with_hint(hint)),
        }
    }
}
