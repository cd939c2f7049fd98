//! Extra-P's saved experiments (`*.extra-p`): a zip archive holding `experiment.json` and,
//! when Extra-P kept the repetitions, `values/N.vals` + `values/N.indx` (NumPy arrays and
//! their offsets).
//!
//! `experiment.json` has the nested layout of [`super::json`] with `coordinate` instead of
//! `point` and per point the statistics Extra-P computed (`mean`, `median`, `minimum`,
//! `maximum`, `std`, `repetitions`) instead of the values; such points carry a
//! [`super::Summary`]. The models Extra-P saved beside the measurements are ignored: we
//! refit.

use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::{Cursor, Read};

use super::builder::Builder;
use super::json::{read_nested_with, Nested};
use super::raw_json::{json_error, OrderedMap};
use super::{Experiment, ReadOptions};
use crate::diag::Diagnostic;

/// The name of the experiment inside the archive.
pub const EXPERIMENT_FILE: &str = "experiment.json";

/// Largest member we decompress (a guard against zip bombs).
const MAX_MEMBER_BYTES: u64 = 1 << 31;

/// A values file and its index.
type Chunk = (Vec<u8>, Vec<u8>);

type Zip<'a> = zip::ZipArchive<Cursor<&'a [u8]>>;

fn member(zip: &mut Zip, name: &str) -> Result<Vec<u8>, String> {
    let mut f = zip.by_name(name).map_err(|e| format!("`{name}`: {e}"))?;
    if f.size() > MAX_MEMBER_BYTES {
        return Err(format!("`{name}` is too large ({} bytes)", f.size()));
    }
    let mut buf = Vec::with_capacity(f.size() as usize);
    f.by_ref()
        .take(MAX_MEMBER_BYTES)
        .read_to_end(&mut buf)
        .map_err(|e| format!("`{name}`: {e}"))?;
    Ok(buf)
}

/// Read a saved experiment from the bytes of the archive; `origin` names it.
pub fn read_bytes(
    origin: &str,
    bytes: &[u8],
    opts: &ReadOptions,
) -> Result<Experiment, Diagnostic> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
        Diagnostic::whole(
            origin,
            format!("not a readable Extra-P experiment (zip archive): {e}"),
        )
    })?;
    let data = member(&mut zip, EXPERIMENT_FILE)
        .map_err(|e| Diagnostic::whole(origin, format!("cannot read {e}")))?;
    let text = String::from_utf8(data)
        .map_err(|_| Diagnostic::whole(origin, format!("`{EXPERIMENT_FILE}` is not UTF-8 text")))?;
    // Messages point into experiment.json, so name it.
    let inner = format!("{origin}!{EXPERIMENT_FILE}");
    let b = Builder::new(&inner, &text, opts);
    let top: OrderedMap = serde_json::from_str(&text)
        .map_err(|e| json_error(&b, &text, &text, &e, "an Extra-P experiment object"))?;
    let zip = RefCell::new(zip);
    // Value chunks (`.vals`, `.indx`), loaded when first needed.
    let chunks: RefCell<HashMap<u64, Chunk>> = RefCell::new(HashMap::new());
    let lookup = |chunk: u64, index: u64| -> Result<Vec<f64>, String> {
        let mut chunks = chunks.borrow_mut();
        let (vals, indx) = match chunks.entry(chunk) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                let mut zip = zip.borrow_mut();
                let vals = member(&mut zip, &format!("values/{chunk}.vals"))?;
                let indx = member(&mut zip, &format!("values/{chunk}.indx"))?;
                v.insert((vals, indx))
            }
        };
        stored_array(vals, indx, index)
    };
    read_nested_with(b, &top, &text, Nested::Saved, &lookup)
}

/// Array `index` of a values chunk: the index file holds a magic line, a count and one
/// offset per array; each array is a NumPy `.npy` record.
fn stored_array(vals: &[u8], indx: &[u8], index: u64) -> Result<Vec<f64>, String> {
    const INDEX_MAGIC: &[u8] = b"Extra-P INDEX\0\0\0";
    const VALUES_MAGIC: &[u8] = b"Extra-P VALUES\0\0";
    if !indx.starts_with(INDEX_MAGIC) || !vals.starts_with(VALUES_MAGIC) {
        return Err("the stored value files have the wrong magic number".into());
    }
    let u64_at = |buf: &[u8], at: usize| -> Option<u64> {
        buf.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let count = u64_at(indx, 16).ok_or("truncated index file")?;
    if index >= count {
        return Err(format!(
            "value array {index} does not exist (the chunk has {count})"
        ));
    }
    let at = usize::try_from(index)
        .ok()
        .and_then(|i| i.checked_mul(8))
        .and_then(|i| i.checked_add(24))
        .ok_or("index out of range")?;
    let start = u64_at(indx, at).ok_or("truncated index file")?;
    let start = usize::try_from(start).map_err(|_| "offset out of range")?;
    let record = vals
        .get(start..)
        .ok_or("offset past the end of the values file")?;
    read_npy(record)
}

/// Decode one `.npy` record holding a 1-D (or any-shape, flattened) array of little-endian
/// `f8`, `f4`, `i8` or `i4` numbers.
pub(crate) fn read_npy(rec: &[u8]) -> Result<Vec<f64>, String> {
    if !rec.starts_with(b"\x93NUMPY") || rec.len() < 10 {
        return Err("not a NumPy array record".into());
    }
    let major = rec[6];
    let (hlen, hstart) = if major == 1 {
        (u16::from_le_bytes([rec[8], rec[9]]) as usize, 10)
    } else {
        let b = rec.get(8..12).ok_or("truncated NumPy header")?;
        (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
    };
    let header = rec
        .get(hstart..hstart + hlen)
        .ok_or("truncated NumPy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "NumPy header is not text")?;
    let descr = header
        .split("'descr':")
        .nth(1)
        .and_then(|s| s.split('\'').nth(1))
        .ok_or("NumPy header has no dtype")?;
    if header.contains("'fortran_order': True") {
        return Err("Fortran-ordered arrays are not supported".into());
    }
    let shape = header
        .split("'shape':")
        .nth(1)
        .and_then(|s| s.split('(').nth(1))
        .and_then(|s| s.split(')').next())
        .ok_or("NumPy header has no shape")?;
    let mut n: usize = 1;
    for dim in shape.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let d: usize = dim
            .parse()
            .map_err(|_| format!("bad NumPy shape `{shape}`"))?;
        n = n.checked_mul(d).ok_or("NumPy array too large")?;
    }
    let data = &rec[hstart + hlen..];
    let (width, decode): (usize, fn(&[u8]) -> f64) = match descr {
        "<f8" => (8, |b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
        "<f4" => (4, |b| {
            f32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64
        }),
        "<i8" => (8, |b| {
            i64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f64
        }),
        "<i4" => (4, |b| {
            i32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64
        }),
        other => return Err(format!("unsupported NumPy dtype `{other}`")),
    };
    let bytes = n.checked_mul(width).ok_or("NumPy array too large")?;
    let data = data.get(..bytes).ok_or("truncated NumPy data")?;
    Ok(data.chunks_exact(width).map(decode).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn npy_records_decode() {
        let data: Vec<u8> = [1.5f64, 2.0, -3.25]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            read_npy(&npy("<f8", "(3,)", &data)).unwrap(),
            vec![1.5, 2.0, -3.25]
        );
        let ints: Vec<u8> = [4i64, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            read_npy(&npy("<i8", "(2,)", &ints)).unwrap(),
            vec![4.0, 5.0]
        );
        assert!(read_npy(&npy("<f8", "(4,)", &data))
            .unwrap_err()
            .contains("truncated"));
        assert!(read_npy(&npy(">f8", "(3,)", &data))
            .unwrap_err()
            .contains("dtype"));
        assert!(read_npy(b"garbage").is_err());
    }
}
