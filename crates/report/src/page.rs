//! The HTML page: one self-contained file (inline CSS and SVG, no script, no network
//! access) built from sections of figures, text and tables. Every figure is also kept
//! as a standalone SVG document for `--svg-dir`.

use std::fmt::Write as _;

/// Escape text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A picture: its file name for `--svg-dir` (without `.svg`) and the SVG document.
#[derive(Clone, Debug)]
pub struct Figure {
    pub name: String,
    pub svg: String,
}

/// A page under construction.
#[derive(Debug)]
pub struct Page {
    title: String,
    body: String,
    figures: Vec<Figure>,
}

const CSS: &str = "
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
.card { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; margin: 0.8em 0 1.6em 0; }
.card figure { margin: 0; } .card .side { max-width: 440px; font-size: 0.92em; }
.side code, td code { word-break: break-all; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.4em 0.8em; margin: 0.6em 0; }
.key { white-space: nowrap; margin-right: 0.6em; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: middle; margin-right: 0.3em; }
.ok { color: #1a7f37; } .miss { color: #c62828; }
";

impl Page {
    pub fn new(title: &str) -> Page {
        Page {
            title: title.to_string(),
            body: String::new(),
            figures: Vec::new(),
        }
    }

    pub fn heading(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h2>{}</h2>", esc(text));
    }

    /// A paragraph of plain text.
    pub fn para(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", esc(text));
    }

    /// A highlighted remark (sampling, aggregation, what is missing).
    pub fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "<div class=\"note\">{}</div>", esc(text));
    }

    /// A figure with HTML beside it (`side_html` is trusted: build it with [`esc`]).
    pub fn card(&mut self, figure: Figure, caption: &str, side_html: &str) {
        let _ = writeln!(
            self.body,
            "<div class=\"card\" id=\"{}\"><figure>{}<figcaption>{}</figcaption></figure><div class=\"side\">{}</div></div>",
            esc(&figure.name),
            inline_svg(&figure.svg),
            esc(caption),
            side_html
        );
        self.figures.push(figure);
    }

    /// A table of plain-text cells.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) {
        let _ = writeln!(self.body, "{}", table_html(header, rows));
    }

    /// Trusted HTML (built with [`esc`]).
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
        self.body.push('\n');
    }

    /// The standalone SVG documents of every figure, in page order.
    pub fn figures(&self) -> &[Figure] {
        &self.figures
    }

    /// The whole HTML document.
    pub fn html(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"generator\" content=\"perfcompose {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n{}</body>\n</html>\n",
            env!("CARGO_PKG_VERSION"),
            esc(&self.title),
            esc(&self.title),
            self.body
        )
    }
}

/// A table of plain-text cells as HTML.
pub fn table_html(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut o = String::from("<table><thead><tr>");
    for h in header {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr></thead><tbody>");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table>");
    o
}

/// An SVG document inlined in HTML: without its XML declaration, if any.
fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_figures_kept() {
        let mut p = Page::new("a <b>");
        p.para("x < y & z");
        p.card(
            Figure {
                name: "f1".into(),
                svg: "<?xml version=\"1.0\"?><svg></svg>".into(),
            },
            "cap",
            "",
        );
        let h = p.html();
        assert!(h.contains("<title>a &lt;b&gt;</title>"));
        assert!(h.contains("x &lt; y &amp; z"));
        assert!(h.contains("<figure><svg></svg>"));
        assert!(!h.contains("<script"));
        assert_eq!(p.figures().len(), 1);
    }
}
