//! Sets of CUBE profiles (Score-P's `profile.cubex`), read the way Extra-P reads them.
//!
//! The input is a directory with one sub-directory per measured point, named after the
//! parameter values: `mm.x10y1z1.r1/profile.cubex` is the point x=10, y=1, z=1 (repetition
//! 1). The part between the first `.` and `.r` holds names and values (`x25.y25.z1`,
//! `x20,5.y20,5` with decimal commas, `x10y1z1`); every folder must name the same
//! parameters in the same order, and parameters with one value across all folders are
//! dropped. Several `*.cubex` files in one folder, or several folders with the same
//! values, are repetitions.
//!
//! A `.cubex` file is a tar archive of `anchor.xml` (plain or gzip: metrics, regions, the
//! call tree, the system tree) and per metric `N.index` (which call-tree nodes have data)
//! and `N.data` (one value per node and location, possibly zlib-compressed in chunks).
//!
//! As Extra-P does: only the top-level metrics are read (metrics without data files are
//! skipped); each call-tree node `a->b->c` is a callpath; values are exclusive (inclusive
//! metrics get their children's inclusive values subtracted); with weak scaling (the
//! default) the values of all locations (processes, threads) are the repetitions, with
//! strong scaling their sum is one repetition per profile; callpaths missing at some
//! points are merged into their nearest ancestor that is present everywhere.
//! Deviations: a point's `values` hold every location's value of every profile (Extra-P
//! counts one repetition per profile, with the same statistics); exclusive values that
//! come out negative from the subtraction are set to 0 (Extra-P does so for integer
//! metrics only).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use super::builder::Builder;
use super::{Experiment, ReadOptions, SeriesKey};
use crate::diag::{Diagnostic, Span};

/// How the values of the locations (processes, threads) of one profile become
/// repetitions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scaling {
    /// Every location's value is a repetition (Extra-P's default, `weak`).
    #[default]
    Weak,
    /// The sum over the locations is one repetition per profile (`strong`).
    Strong,
}

impl std::str::FromStr for Scaling {
    type Err = String;

    fn from_str(s: &str) -> Result<Scaling, String> {
        match s.to_ascii_lowercase().as_str() {
            "weak" => Ok(Scaling::Weak),
            "strong" => Ok(Scaling::Strong),
            _ => Err(format!("unknown scaling `{s}` (known: weak, strong)")),
        }
    }
}

/// Options of the CUBE reader.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CubeOptions {
    pub scaling: Scaling,
}

/// Largest member of a `.cubex` archive we decompress (a guard against bombs).
const MAX_MEMBER_BYTES: u64 = 1 << 31;

/// UINT64 values above this are treated as 0, as CubeLib and Extra-P do.
const MAX_UINT64_DOUBLE: u64 = 0xFFFF_FFFF_FFFF_FBFF;

fn whole(origin: &Path, message: impl Into<String>) -> Diagnostic {
    Diagnostic::whole(origin.display().to_string(), message)
}

/// Parameter names and values from a folder name such as `mm.x25.y25.z1.r1`.
pub fn parameters_from_folder(folder: &str) -> Result<(Vec<String>, Vec<f64>), String> {
    let start = folder.find('.').map_or(0, |i| i + 1);
    let end = folder
        .find(".r")
        .filter(|e| *e >= start)
        .unwrap_or(folder.len());
    let spec = &folder[start..end];
    let mut names = Vec::new();
    let mut values = Vec::new();
    let mut rest = spec;
    let fail = || {
        format!(
            "cannot read parameters from the folder name `{folder}` (expected e.g. `mm.x10y2.r1`)"
        )
    };
    while !rest.is_empty() {
        let name_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.' || c == ',')
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        rest = &rest[name_len..];
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
            .unwrap_or(rest.len());
        let num = &rest[..num_len];
        rest = &rest[num_len..];
        if name.is_empty() || num.is_empty() {
            return Err(fail());
        }
        let v: f64 = num
            .replace(',', ".")
            .trim_end_matches('.')
            .parse()
            .map_err(|_| fail())?;
        names.push(name.to_string());
        values.push(v);
    }
    if names.is_empty() {
        return Err(fail());
    }
    Ok((names, values))
}

/// Read a directory of CUBE profiles.
pub fn read_dir(dir: &Path, opts: &ReadOptions) -> Result<Experiment, Diagnostic> {
    let mut files: Vec<(PathBuf, Vec<String>, Vec<f64>)> = Vec::new();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| whole(dir, format!("cannot read the directory: {e}")))?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let mut cubex: Vec<PathBuf> = std::fs::read_dir(&folder)
            .map_err(|e| whole(&folder, format!("cannot read the directory: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.extension().is_some_and(|x| x == "cubex")
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        cubex.sort();
        if cubex.is_empty() {
            continue;
        }
        let name = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (names, values) = parameters_from_folder(&name).map_err(|m| whole(&folder, m))?;
        if let Some((first_file, first, _)) = files.first() {
            if *first != names {
                let first_folder = first_file
                    .parent()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Err(whole(
                    &folder,
                    format!(
                        "parameters must be the same and in the same order in every folder: ({}) here, ({}) in `{first_folder}`",
                        names.join(", "),
                        first.join(", ")
                    ),
                ));
            }
        }
        for f in cubex {
            files.push((f, names.clone(), values.clone()));
        }
    }
    if files.is_empty() {
        return Err(
            whole(dir, "no CUBE profiles (`*/*.cubex`) in this directory").with_hint(
                "each measured point is a folder such as `mm.x10y1.r1` holding a `profile.cubex`",
            ),
        );
    }
    // Keep the parameters that vary.
    let names = files[0].1.clone();
    let varying: Vec<usize> = (0..names.len())
        .filter(|&i| files.iter().any(|f| f.2[i] != files[0].2[i]))
        .collect();
    if varying.is_empty() {
        return Err(whole(
            dir,
            "every folder has the same parameter values, so nothing varies",
        ));
    }
    let origin = dir.display().to_string();
    let mut b = Builder::new(&origin, "", opts);
    b.parameters = varying.iter().map(|&i| names[i].clone()).collect();
    let coord_of = |f: &(PathBuf, Vec<String>, Vec<f64>)| {
        varying.iter().map(|&i| f.2[i]).collect::<Vec<f64>>()
    };
    files.sort_by(|a, c| {
        coord_of(a)
            .iter()
            .zip(coord_of(c).iter())
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    // (callpath, metric) -> coordinate index -> values
    let mut data: BTreeMap<SeriesKey, BTreeMap<usize, Vec<f64>>> = BTreeMap::new();
    let mut parents: HashMap<String, Option<String>> = HashMap::new();
    for f in &files {
        let ci = b
            .coordinate(coord_of(f), Span::new(0, 0))
            .map_err(|d| whole(&f.0, d.message))?;
        let profile = read_profile(&f.0, opts.cube.scaling)?;
        for (callpath, parent) in profile.parents {
            parents.entry(callpath).or_insert(parent);
        }
        for (key, values) in profile.values {
            data.entry(key)
                .or_default()
                .entry(ci)
                .or_default()
                .extend(values);
        }
    }
    let npoints = b.coordinate_count();
    // Callpaths that are not measured at every point merge into an ancestor that is.
    let partial: Vec<SeriesKey> = data
        .iter()
        .filter(|(_, v)| v.len() < npoints)
        .map(|(k, _)| k.clone())
        .collect();
    for key in partial {
        let Some(points) = data.remove(&key) else {
            continue;
        };
        let mut up = parents.get(&key.callpath).cloned().flatten();
        while let Some(cp) = up {
            let target = SeriesKey::new(cp.clone(), key.metric.clone());
            if let Some(t) = data.get_mut(&target).filter(|t| t.len() == npoints) {
                for (ci, vals) in points {
                    merge_into(t.entry(ci).or_default(), &vals);
                }
                break;
            }
            up = parents.get(&cp).cloned().flatten();
        }
    }
    for (key, points) in data {
        for (ci, values) in points {
            for v in &values {
                b.value(*v, Span::new(0, 0))
                    .map_err(|d| whole(dir, format!("`{key}`: {}", d.message)))?;
            }
            b.add(key.clone(), ci, values, Span::new(0, 0));
        }
    }
    b.finish()
}

/// The first child element of `n` named `tag`.
fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, tag: &str) -> Option<roxmltree::Node<'a, 'i>> {
    n.children().find(|c| c.has_tag_name(tag))
}

/// The trimmed text of `n`'s child `tag` (empty if absent).
fn text_of(n: roxmltree::Node, tag: &str) -> String {
    child(n, tag)
        .and_then(|c| c.text())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Approximate merge of a child's values into its ancestor's (as Extra-P does): element by
/// element when both have as many values, else the child's mean added to each value.
fn merge_into(target: &mut [f64], child: &[f64]) {
    if child.is_empty() {
        return;
    }
    if target.len() == child.len() {
        for (t, c) in target.iter_mut().zip(child) {
            *t += c;
        }
    } else {
        let mean = child.iter().sum::<f64>() / child.len() as f64;
        for t in target.iter_mut() {
            *t += mean;
        }
    }
}

struct Profile {
    /// Values per (callpath, metric): every location's value, or their sum.
    values: Vec<(SeriesKey, Vec<f64>)>,
    /// Each callpath's parent callpath.
    parents: Vec<(String, Option<String>)>,
}

struct CNode {
    callpath: String,
    children: Vec<usize>,
}

struct Metric {
    id: i64,
    name: String,
    inclusive: bool,
    dtype: String,
}

fn read_profile(path: &Path, scaling: Scaling) -> Result<Profile, Diagnostic> {
    let bytes =
        std::fs::read(path).map_err(|e| whole(path, format!("cannot read the file: {e}")))?;
    parse_profile(path, &bytes, scaling)
}

/// Parse the bytes of one `.cubex` file; `path` names it in messages.
fn parse_profile(path: &Path, bytes: &[u8], scaling: Scaling) -> Result<Profile, Diagnostic> {
    let mut members: HashMap<String, Vec<u8>> = HashMap::new();
    let mut archive = tar::Archive::new(bytes);
    let entries = archive
        .entries()
        .map_err(|e| whole(path, format!("not a CUBE file (tar archive): {e}")))?;
    for entry in entries {
        let mut entry =
            entry.map_err(|e| whole(path, format!("not a CUBE file (tar archive): {e}")))?;
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if entry.size() > MAX_MEMBER_BYTES {
            return Err(whole(path, format!("member `{name}` is too large")));
        }
        let mut buf = Vec::new();
        entry
            .by_ref()
            .take(MAX_MEMBER_BYTES)
            .read_to_end(&mut buf)
            .map_err(|e| whole(path, format!("cannot read member `{name}`: {e}")))?;
        members.insert(name, buf);
    }
    let anchor = members
        .get("anchor.xml")
        .ok_or_else(|| whole(path, "not a CUBE file: no `anchor.xml` inside"))?;
    let anchor = if anchor.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(anchor.as_slice())
            .take(MAX_MEMBER_BYTES)
            .read_to_end(&mut out)
            .map_err(|e| whole(path, format!("cannot decompress `anchor.xml`: {e}")))?;
        out
    } else {
        anchor.clone()
    };
    let text = String::from_utf8(anchor).map_err(|_| whole(path, "`anchor.xml` is not UTF-8"))?;
    let origin = format!("{}!anchor.xml", path.display());
    let doc = roxmltree::Document::parse(&text).map_err(|e| {
        let pos = e.pos();
        let at = crate::diag::line_offset(&text, pos.row as usize)
            + (pos.col as usize).saturating_sub(1);
        Diagnostic::new(
            &origin,
            text.as_str(),
            Span::at(at.min(text.len().saturating_sub(1))),
            format!("invalid XML: {e}"),
        )
    })?;
    let xml_err = |node: roxmltree::Node, msg: String| {
        let r = node.range();
        Diagnostic::new(&origin, text.as_str(), Span::new(r.start, r.start + 1), msg)
    };
    let root = doc.root_element();
    let id_of = |n: roxmltree::Node, attr: &str| -> Result<i64, Diagnostic> {
        n.attribute(attr)
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                xml_err(
                    n,
                    format!("<{}> needs a numeric `{attr}`", n.tag_name().name()),
                )
            })
    };
    // Top-level metrics only, as Extra-P.
    let metrics_node = child(root, "metrics")
        .ok_or_else(|| xml_err(root, "anchor.xml has no <metrics>".into()))?;
    let mut metrics = Vec::new();
    for m in metrics_node.children().filter(|c| c.has_tag_name("metric")) {
        let kind = m.attribute("type").unwrap_or("");
        if kind != "INCLUSIVE" && kind != "EXCLUSIVE" {
            continue; // derived metrics have no data
        }
        metrics.push(Metric {
            id: id_of(m, "id")?,
            name: text_of(m, "uniq_name"),
            inclusive: kind == "INCLUSIVE",
            dtype: text_of(m, "dtype"),
        });
    }
    let program = child(root, "program")
        .ok_or_else(|| xml_err(root, "anchor.xml has no <program>".into()))?;
    let mut regions: HashMap<i64, String> = HashMap::new();
    for r in program.children().filter(|c| c.has_tag_name("region")) {
        regions.insert(id_of(r, "id")?, text_of(r, "name"));
    }
    // The call tree, flattened; `roots` in document order.
    let mut cnodes: Vec<CNode> = Vec::new();
    let mut roots = Vec::new();
    let mut parents = Vec::new();
    let mut stack: Vec<(roxmltree::Node, Option<usize>)> = program
        .children()
        .filter(|c| c.has_tag_name("cnode"))
        .map(|c| (c, None))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    while let Some((node, parent)) = stack.pop() {
        let region = id_of(node, "calleeId")?;
        let name = regions.get(&region).ok_or_else(|| {
            xml_err(
                node,
                format!("call-tree node names unknown region {region}"),
            )
        })?;
        let parent_path = parent.map(|p| cnodes[p].callpath.clone());
        let callpath = match &parent_path {
            Some(p) => format!("{p}->{name}"),
            None => name.clone(),
        };
        let index = cnodes.len();
        id_of(node, "id")?; // required by the format, though the tree order is what counts
        cnodes.push(CNode {
            callpath: callpath.clone(),
            children: Vec::new(),
        });
        parents.push((callpath, parent_path));
        match parent {
            Some(p) => cnodes[p].children.push(index),
            None => roots.push(index),
        }
        let kids: Vec<_> = node
            .children()
            .filter(|c| c.has_tag_name("cnode"))
            .collect();
        for k in kids.into_iter().rev() {
            stack.push((k, Some(index)));
        }
    }
    let deep = deep_enumeration(&cnodes, &roots);
    let wide = wide_enumeration(&cnodes, &roots);
    let mut values = Vec::new();
    for m in &metrics {
        let (Some(index), Some(data)) = (
            members.get(&format!("{}.index", m.id)),
            members.get(&format!("{}.data", m.id)),
        ) else {
            continue; // no data for this metric: Extra-P skips it too
        };
        let fail = |msg: String| whole(path, format!("metric `{}`: {msg}", m.name));
        let (little, tree_indices) = parse_index(index).map_err(fail)?;
        let raw = parse_data(data, little).map_err(fail)?;
        let numbers = decode(&raw, &m.dtype, little).map_err(fail)?;
        if tree_indices.is_empty() || numbers.len() % tree_indices.len() != 0 {
            return Err(fail(format!(
                "{} values do not divide among {} call-tree nodes",
                numbers.len(),
                tree_indices.len()
            )));
        }
        let locations = numbers.len() / tree_indices.len();
        let enumeration = if m.inclusive { &wide } else { &deep };
        // Per cnode (by index into `cnodes`): its row of location values.
        let mut rows: HashMap<usize, &[f64]> = HashMap::new();
        let mut order = Vec::new();
        for (k, t) in tree_indices.iter().enumerate() {
            let node = usize::try_from(*t)
                .ok()
                .and_then(|t| enumeration.get(t))
                .copied()
                .ok_or_else(|| {
                    fail(format!(
                        "index names call-tree position {t}, which does not exist"
                    ))
                })?;
            rows.insert(node, &numbers[k * locations..(k + 1) * locations]);
            order.push(node);
        }
        for node in order {
            let mut row: Vec<f64> = rows[&node].to_vec();
            if m.inclusive {
                for &kid in &cnodes[node].children {
                    let kid_row = inclusive_row(&cnodes, &rows, kid, locations, m.inclusive);
                    for (v, k) in row.iter_mut().zip(kid_row) {
                        *v -= k;
                    }
                }
                for v in row.iter_mut() {
                    if *v < 0.0 {
                        *v = 0.0;
                    }
                }
            }
            let key = SeriesKey::new(cnodes[node].callpath.clone(), m.name.clone());
            match scaling {
                Scaling::Weak => values.push((key, row)),
                Scaling::Strong => values.push((key, vec![row.iter().sum()])),
            }
        }
    }
    Ok(Profile { values, parents })
}

/// A node's inclusive values: stored as they are for inclusive metrics; for exclusive ones
/// the node's own plus its descendants'.
fn inclusive_row(
    cnodes: &[CNode],
    rows: &HashMap<usize, &[f64]>,
    node: usize,
    locations: usize,
    inclusive: bool,
) -> Vec<f64> {
    let mut row = rows
        .get(&node)
        .map_or_else(|| vec![0.0; locations], |r| r.to_vec());
    if !inclusive {
        for &kid in &cnodes[node].children {
            for (v, k) in row
                .iter_mut()
                .zip(inclusive_row(cnodes, rows, kid, locations, inclusive))
            {
                *v += k;
            }
        }
    }
    row
}

/// Tree position → node for exclusive metrics: depth-first, pre-order.
fn deep_enumeration(cnodes: &[CNode], roots: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(cnodes.len());
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(n) = stack.pop() {
        out.push(n);
        stack.extend(cnodes[n].children.iter().rev());
    }
    out
}

/// Tree position → node for inclusive metrics: a node's children are numbered together
/// when the node is visited, depth first (CUBE's "wide" enumeration).
fn wide_enumeration(cnodes: &[CNode], roots: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(cnodes.len());
    for &root in roots {
        out.push(root);
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            out.extend(cnodes[n].children.iter());
            stack.extend(cnodes[n].children.iter().rev());
        }
    }
    out
}

/// `CUBEX.INDEX`: byte order mark, version, index type, count, tree positions.
fn parse_index(b: &[u8]) -> Result<(bool, Vec<i32>), String> {
    const MAGIC: &[u8] = b"CUBEX.INDEX";
    if !b.starts_with(MAGIC) || b.len() < MAGIC.len() + 11 {
        return Err("the index file has no CUBEX.INDEX header".into());
    }
    let at = MAGIC.len();
    let little = i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) == 1;
    let i32_at = |i: usize| -> Option<i32> {
        let s: [u8; 4] = b.get(i..i + 4)?.try_into().ok()?;
        Some(if little {
            i32::from_le_bytes(s)
        } else {
            i32::from_be_bytes(s)
        })
    };
    let n = i32_at(at + 7).ok_or("truncated index file")?;
    let n = usize::try_from(n).map_err(|_| "negative node count in the index file")?;
    let body = &b[at + 11..];
    if body.len() != n.saturating_mul(4) {
        return Err(format!(
            "the index file should list {n} nodes but has {} bytes for them",
            body.len()
        ));
    }
    Ok((
        little,
        (0..n).filter_map(|k| i32_at(at + 11 + 4 * k)).collect(),
    ))
}

/// The raw bytes of `CUBEX.DATA`, or the concatenated zlib chunks of `ZCUBEX.DATA`.
fn parse_data(b: &[u8], little: bool) -> Result<Vec<u8>, String> {
    if let Some(rest) = b.strip_prefix(b"CUBEX.DATA".as_slice()) {
        return Ok(rest.to_vec());
    }
    let Some(rest) = b.strip_prefix(b"ZCUBEX.DATA".as_slice()) else {
        return Err("the data file has no CUBEX.DATA header".into());
    };
    let i64_at = |i: usize| -> Option<i64> {
        let s: [u8; 8] = rest.get(i..i + 8)?.try_into().ok()?;
        Some(if little {
            i64::from_le_bytes(s)
        } else {
            i64::from_be_bytes(s)
        })
    };
    let n = i64_at(0).ok_or("truncated compressed data header")?;
    let n = usize::try_from(n)
        .ok()
        .filter(|n| n.saturating_mul(24) <= rest.len())
        .ok_or("impossible chunk count")?;
    let mut pos = 8 + 24 * n;
    let mut out = Vec::new();
    for k in 0..n {
        let size = i64_at(8 + 24 * k + 16).ok_or("truncated chunk header")?;
        let size = usize::try_from(size).map_err(|_| "negative chunk size")?;
        if size == 0 {
            continue;
        }
        let chunk = rest
            .get(pos..pos + size)
            .ok_or("a compressed chunk runs past the end")?;
        flate2::read::ZlibDecoder::new(chunk)
            .take(MAX_MEMBER_BYTES)
            .read_to_end(&mut out)
            .map_err(|e| format!("cannot decompress a chunk: {e}"))?;
        pos += size;
    }
    Ok(out)
}

/// Numbers of the metric's CUBE data type.
fn decode(raw: &[u8], dtype: &str, little: bool) -> Result<Vec<f64>, String> {
    fn each<const N: usize>(raw: &[u8], little: bool, f: impl Fn([u8; N]) -> f64) -> Vec<f64> {
        raw.chunks_exact(N)
            .map(|c| {
                let mut a = [0u8; N];
                a.copy_from_slice(c);
                if !little {
                    a.reverse();
                }
                f(a)
            })
            .collect()
    }
    let width = match dtype {
        "DOUBLE" | "FLOAT" | "MINDOUBLE" | "MAXDOUBLE" | "INT64" | "INTEGER" | "SIGNED INTEGER"
        | "UINT64" | "UNSIGNED INTEGER" => 8,
        "INT32" | "INT" | "SIGNED INT" | "UINT32" | "UNSIGNED INT" => 4,
        "INT16" | "SHORT INT" | "SIGNED SHORT INT" | "UINT16" | "UNSIGNED SHORT INT" => 2,
        "INT8" | "UINT8" | "CHAR" => 1,
        other => return Err(format!("unsupported CUBE data type `{other}`")),
    };
    if raw.len() % width != 0 {
        return Err(format!(
            "{} data bytes are not a whole number of {dtype} values",
            raw.len()
        ));
    }
    Ok(match dtype {
        "DOUBLE" | "FLOAT" | "MINDOUBLE" | "MAXDOUBLE" => {
            each::<8>(raw, little, f64::from_le_bytes)
        }
        "INT64" | "INTEGER" | "SIGNED INTEGER" => {
            each::<8>(raw, little, |a| i64::from_le_bytes(a) as f64)
        }
        "UINT64" | "UNSIGNED INTEGER" => each::<8>(raw, little, |a| {
            let v = u64::from_le_bytes(a);
            if v > MAX_UINT64_DOUBLE {
                0.0
            } else {
                v as f64
            }
        }),
        "INT32" | "INT" | "SIGNED INT" => each::<4>(raw, little, |a| i32::from_le_bytes(a) as f64),
        "UINT32" | "UNSIGNED INT" => each::<4>(raw, little, |a| u32::from_le_bytes(a) as f64),
        "INT16" | "SHORT INT" | "SIGNED SHORT INT" => {
            each::<2>(raw, little, |a| i16::from_le_bytes(a) as f64)
        }
        "UINT16" | "UNSIGNED SHORT INT" => each::<2>(raw, little, |a| u16::from_le_bytes(a) as f64),
        "INT8" => each::<1>(raw, little, |a| a[0] as i8 as f64),
        _ => each::<1>(raw, little, |a| a[0] as f64),
    })
}

/// Parse one `.cubex` file from memory and count its series (for fuzzing and tests).
pub fn check_profile(bytes: &[u8]) -> Result<usize, Diagnostic> {
    parse_profile(Path::new("<memory>"), bytes, Scaling::Weak).map(|p| p.values.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_give_parameters() {
        let p = |s: &str| parameters_from_folder(s).unwrap();
        assert_eq!(
            p("mm.x10y1z1.r1"),
            (
                vec!["x".into(), "y".into(), "z".into()],
                vec![10.0, 1.0, 1.0]
            )
        );
        assert_eq!(p("mm.x22.5.y22.5.z1.25.r1").1, vec![22.5, 22.5, 1.25]);
        assert_eq!(p("mm.x21.5,y21,5,z1.15.r1").1, vec![21.5, 21.5, 1.15]);
        assert_eq!(p("mm.x20,5.y20,5.z1,5.r1").1, vec![20.5, 20.5, 1.5]);
        assert_eq!(p("x10y1z1").1, vec![10.0, 1.0, 1.0]);
        assert_eq!(p("example.f3"), (vec!["f".into()], vec![3.0]));
        assert!(parameters_from_folder("mm.10x").is_err());
        assert!(parameters_from_folder("mm.x1y").is_err());
        assert!(parameters_from_folder("plain").is_err());
    }

    #[test]
    fn enumerations_follow_cube() {
        // 0 -> (1 -> 3, 2)
        let c = |children: Vec<usize>| CNode {
            callpath: String::new(),
            children,
        };
        let nodes = vec![c(vec![1, 2]), c(vec![3]), c(vec![]), c(vec![])];
        assert_eq!(deep_enumeration(&nodes, &[0]), vec![0, 1, 3, 2]);
        assert_eq!(wide_enumeration(&nodes, &[0]), vec![0, 1, 2, 3]);
    }

    #[test]
    fn bad_binary_members_are_errors_not_panics() {
        assert!(parse_index(b"CUBEX.INDEX").is_err());
        assert!(parse_index(b"nonsense").is_err());
        assert!(parse_data(b"ZCUBEX.DATA\xff\xff\xff\xff\xff\xff\xff\x7f", true).is_err());
        assert!(decode(&[0; 7], "DOUBLE", true).is_err());
        assert!(decode(&[0; 8], "TAU_ATOMIC", true).is_err());
        assert_eq!(
            decode(&1.5f64.to_le_bytes(), "DOUBLE", true).unwrap(),
            vec![1.5]
        );
        assert_eq!(
            decode(&u64::MAX.to_le_bytes(), "UINT64", true).unwrap(),
            vec![0.0]
        );
    }
}
