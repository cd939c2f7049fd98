//! A command line with `{NAME}` placeholders for the parameters of a grid.
//!
//! `{x}` in any word is replaced by the point's value of `x` (integers without a decimal
//! point: `1000`, not `1000.0`). A word may hold several placeholders and text around
//! them (`--n={x}`, `in-{p}x{n}.dat`). Braces around anything other than a parameter
//! name are left alone (`{print $1}` for awk), and so is `${NAME}`, the shell's own
//! syntax; a `{name}` that is no parameter of the grid is refused before anything runs.

use super::error::CommandError;

/// A command: its words run directly (the first word is the program), or joined by
/// spaces into a script for `sh -c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLine {
    words: Vec<String>,
    shell: bool,
}

/// The shell that runs `--shell` commands and `--prepare` scripts.
pub const SHELL: &str = "sh";

impl CommandLine {
    /// The command `words` over the grid's `parameters`; `shell`: run through `sh -c`.
    pub fn new(
        words: Vec<String>,
        shell: bool,
        parameters: &[String],
    ) -> Result<CommandLine, CommandError> {
        if words.is_empty() || words.iter().all(|w| w.trim().is_empty()) {
            return Err(CommandError::Line {
                message: "no command to run".into(),
                hint: "give it after `--`, e.g. -- ./mysort {x}".into(),
            });
        }
        for w in &words {
            for name in placeholders(w) {
                if !parameters.iter().any(|p| p == name) {
                    return Err(CommandError::Line {
                        message: format!(
                            "the command has a placeholder `{{{name}}}`, and the grid has no parameter `{name}`"
                        ),
                        hint: if parameters.is_empty() {
                            format!("give its values with --at {name}=...")
                        } else {
                            format!(
                                "the grid's parameters: {} (--at NAME=...)",
                                parameters.join(", ")
                            )
                        },
                    });
                }
            }
        }
        Ok(CommandLine { words, shell })
    }

    /// Whether a word holds the placeholder `{name}`.
    pub fn uses(&self, name: &str) -> bool {
        self.words.iter().any(|w| placeholders(w).contains(&name))
    }

    /// Refuse a grid parameter that neither `command` nor `prepare` gets: its points
    /// would all run the same command.
    pub fn check_used(
        parameters: &[String],
        command: &CommandLine,
        prepare: Option<&CommandLine>,
    ) -> Result<(), CommandError> {
        match parameters
            .iter()
            .find(|p| !command.uses(p) && !prepare.is_some_and(|c| c.uses(p)))
        {
            Some(p) => Err(CommandError::UnusedParameter {
                parameter: p.clone(),
            }),
            None => Ok(()),
        }
    }

    /// A script for `sh -c` (what `--prepare` runs).
    pub fn script(text: &str, parameters: &[String]) -> Result<CommandLine, CommandError> {
        CommandLine::new(vec![text.to_string()], true, parameters)
    }

    /// Whether the words run through `sh -c`.
    pub fn through_shell(&self) -> bool {
        self.shell
    }

    /// The program and its arguments at `point`.
    pub fn argv(&self, point: &[(String, f64)]) -> Vec<String> {
        let words: Vec<String> = self.words.iter().map(|w| substitute(w, point)).collect();
        if self.shell {
            vec![SHELL.to_string(), "-c".to_string(), words.join(" ")]
        } else {
            words
        }
    }

    /// The command line at `point` as a user would type it (for messages).
    pub fn display(&self, point: &[(String, f64)]) -> String {
        let argv = self.argv(point);
        if self.shell {
            argv[2].clone()
        } else {
            join(&argv)
        }
    }

    /// The command as written, placeholders and all.
    pub fn template(&self) -> String {
        if self.shell {
            self.words.join(" ")
        } else {
            join(&self.words)
        }
    }
}

/// A parameter's value as a placeholder writes it: integers without a decimal point.
pub fn format_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// `x=1000, p=2`.
pub fn format_point(point: &[(String, f64)]) -> String {
    point
        .iter()
        .map(|(n, v)| format!("{n}={}", format_value(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Words joined as a POSIX shell reads them back: a word with other characters than
/// letters, digits and `-_./=:,+@%^` in single quotes.
fn join(words: &[String]) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c);
    words
        .iter()
        .map(|w| {
            if !w.is_empty() && w.chars().all(safe) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Is `s` a parameter name?
fn is_name(s: &str) -> bool {
    matches!(s.chars().next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The `{NAME}` placeholders of `word` with their byte ranges (not `${NAME}`).
fn spans(word: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = word[from..].find('{').map(|i| i + from) {
        let Some(close) = word[open..].find('}').map(|i| i + open) else {
            break;
        };
        let name = &word[open + 1..close];
        let dollar = open > 0 && word.as_bytes()[open - 1] == b'$';
        if is_name(name) && !dollar {
            out.push((open, close + 1, name));
            from = close + 1;
        } else {
            from = open + 1;
        }
    }
    out
}

fn placeholders(word: &str) -> Vec<&str> {
    spans(word).into_iter().map(|(_, _, n)| n).collect()
}

fn substitute(word: &str, point: &[(String, f64)]) -> String {
    let mut out = String::with_capacity(word.len());
    let mut last = 0;
    for (start, end, name) in spans(word) {
        if let Some((_, v)) = point.iter().find(|(n, _)| n == name) {
            out.push_str(&word[last..start]);
            out.push_str(&format_value(*v));
            last = end;
        }
    }
    out.push_str(&word[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Vec<String> {
        vec!["x".into(), "p".into()]
    }

    fn at(x: f64, p: f64) -> Vec<(String, f64)> {
        vec![("x".into(), x), ("p".into(), p)]
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn placeholders_are_replaced_in_every_word() {
        let c = CommandLine::new(
            words(&["./halo", "--n={x}", "in-{p}x{x}.dat", "{y"]),
            false,
            &params(),
        )
        .unwrap();
        assert_eq!(
            c.argv(&at(1024.0, 2.0)),
            ["./halo", "--n=1024", "in-2x1024.dat", "{y"]
        );
        assert_eq!(c.argv(&at(0.5, 2.0))[1], "--n=0.5");
        assert_eq!(c.display(&at(8.0, 2.0)), "./halo --n=8 in-2x8.dat '{y'");
        assert_eq!(join(&words(&["a b", "it's", ""])), "'a b' 'it'\\''s' ''");
    }

    #[test]
    fn the_shell_gets_one_script_and_keeps_its_own_braces() {
        let c = CommandLine::new(
            words(&["seq {x} | awk '{s+=$1} END {print s}' > ${TMPDIR}/out"]),
            true,
            &params(),
        )
        .unwrap();
        let argv = c.argv(&at(3.0, 1.0));
        assert_eq!(argv[..2], ["sh", "-c"]);
        assert_eq!(
            argv[2],
            "seq 3 | awk '{s+=$1} END {print s}' > ${TMPDIR}/out"
        );
        assert_eq!(c.display(&at(3.0, 1.0)), argv[2]);
    }

    #[test]
    fn unknown_placeholders_and_empty_commands_are_refused() {
        let e = CommandLine::new(words(&["./a", "{n}"]), false, &params()).unwrap_err();
        assert!(e.to_string().contains("no parameter `n`"), "{e}");
        assert!(e.hint().unwrap().contains("x, p"));
        let e = CommandLine::new(Vec::new(), false, &params()).unwrap_err();
        assert_eq!(e.to_string(), "no command to run");
        assert!(CommandLine::new(words(&[" "]), true, &params()).is_err());
    }

    #[test]
    fn a_parameter_neither_the_command_nor_prepare_gets_is_refused() {
        let cmd = |w: &[&str]| CommandLine::new(words(w), false, &params()).unwrap();
        let e = CommandLine::check_used(&params(), &cmd(&["./a", "{x}"]), None).unwrap_err();
        assert!(e.to_string().contains("no `{p}`"), "{e}");
        assert!(e.hint().unwrap().contains("./myblock {p}"));
        let prep = CommandLine::script("make in-{p}", &params()).unwrap();
        CommandLine::check_used(&params(), &cmd(&["./a", "{x}"]), Some(&prep)).unwrap();
        CommandLine::check_used(&params(), &cmd(&["./a", "--n={x}x{p}"]), None).unwrap();
    }

    #[test]
    fn values_print_as_integers_where_they_are() {
        assert_eq!(format_value(1024.0), "1024");
        assert_eq!(format_value(-3.0), "-3");
        assert_eq!(format_value(2.5), "2.5");
        assert_eq!(format_value(1e20), "100000000000000000000");
        assert_eq!(format_point(&at(1024.0, 2.0)), "x=1024, p=2");
    }
}

#[cfg(test)]
mod properties {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(5), ..Default::default() })]

        /// Any words: a command line or an error, never a panic; substituting leaves no
        /// placeholder of the grid behind.
        #[test]
        fn any_words_are_read_or_refused(words in proptest::collection::vec("[a-z{}$ x_=.'-]{0,12}", 0..4), shell: bool) {
            let params = vec!["x".to_string()];
            if let Ok(c) = CommandLine::new(words, shell, &params) {
                let argv = c.argv(&[("x".to_string(), 7.0)]);
                let _ = c.display(&[("x".to_string(), 7.0)]);
                let _ = c.template();
                for w in &argv[if shell { 2 } else { 0 }..] {
                    proptest::prop_assert!(placeholders(w).is_empty(), "{w}");
                }
            }
        }
    }
}
