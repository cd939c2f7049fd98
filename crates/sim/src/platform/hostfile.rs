//! Hostfiles: which host each process slot (hence each rank) runs on.

use perfcompose_core::diag::{Diagnostic, Span};

use super::model::{HostId, Platform};
use crate::trace::MAX_RANKS;

/// Reads a hostfile: one host name per line, or `name:count` for `count` consecutive
/// ranks (as `smpirun` unrolls it); blank lines are skipped. Returns the host of each
/// slot; rank `r` runs on slot `r % len`, so at most [`MAX_RANKS`] slots are useful and
/// more are an error.
pub fn read_hostfile(
    origin: &str,
    text: &str,
    platform: &Platform,
) -> Result<Vec<HostId>, Diagnostic> {
    let mut hosts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim();
        let lead = content.len() - content.trim_start().len();
        let start = offset + lead;
        offset += line.len();
        if trimmed.is_empty() {
            continue;
        }
        let (name, count, count_span) = match trimmed.rsplit_once(':') {
            Some((n, c)) => {
                let c_off = start + n.len() + 1;
                let count: usize = c.trim().parse().map_err(|_| {
                    Diagnostic::new(
                        origin,
                        text,
                        Span::new(c_off, c_off + c.len()),
                        format!("bad process count '{c}' in hostfile"),
                    )
                    .with_hint("write `host` or `host:count` with a whole number")
                })?;
                (n.trim(), count, Span::new(c_off, c_off + c.len()))
            }
            None => (trimmed, 1, Span::new(start, start + trimmed.len())),
        };
        let id = platform.host_by_name(name).ok_or_else(|| {
            Diagnostic::new(
                origin,
                text,
                Span::new(start, start + name.len()),
                format!("host '{name}' is not in the platform {}", platform.origin()),
            )
            .with_hint(host_hint(platform))
        })?;
        if count > MAX_RANKS as usize - hosts.len() {
            return Err(Diagnostic::new(
                origin,
                text,
                count_span,
                format!("the hostfile lists more than {MAX_RANKS} process slots"),
            )
            .with_hint(
                "a trace has at most that many ranks; the extra slots would never be used",
            ));
        }
        hosts.resize(hosts.len() + count, id);
    }
    if hosts.is_empty() {
        return Err(Diagnostic::whole(origin, "the hostfile lists no host"));
    }
    Ok(hosts)
}

fn host_hint(platform: &Platform) -> String {
    let names: Vec<&str> = platform
        .hosts_sorted_by_name()
        .iter()
        .take(5)
        .map(|&h| platform.host(h).name.as_str())
        .collect();
    format!(
        "the platform has {} hosts, e.g. {}",
        platform.hosts().len(),
        names.join(", ")
    )
}
