//! Archives written by the OTF2 library's own writer (Debian's python3-otf2, following
//! Score-P's conventions: `testdata/otf2/scorep_like.py`) converted, line for line, into
//! the time-independent trace the same script writes for the same program; malformed
//! archives refused with an error naming the archive.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use perfcompose_otf2::{convert, DefError, Error, EventError};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Write scenario `name` into a fresh directory (computation at `speed` flop/s on the
/// time-independent side); returns the directory.
fn write(name: &str, speed: f64) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "otf2-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new("/usr/bin/python3")
        .arg(testdata().join("otf2/scorep_like.py"))
        .arg(name)
        .arg(&dir)
        .arg(speed.to_string())
        .output()
        .expect("run /usr/bin/python3 (bash scripts/install-otf2 installs python3-otf2)");
    assert!(
        out.status.success(),
        "scorep_like.py {name} failed (bash scripts/install-otf2 installs python3-otf2):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// The converted trace equals the script's time-independent one, rank by rank.
fn check_equivalent(name: &str, speed: f64) -> perfcompose_otf2::Conversion {
    let dir = write(name, speed);
    let conv = convert(&dir.join("traces.otf2"), &|_| speed).unwrap();
    for (r, text) in conv.texts.iter().enumerate() {
        let want = std::fs::read_to_string(dir.join(format!("ti/trace_{r}.txt"))).unwrap();
        let got = String::from_utf8_lossy(text);
        assert_eq!(got, want, "{name}: rank {r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    conv
}

#[test]
fn point_to_point_converts_to_the_equivalent_trace() {
    let conv = check_equivalent("p2p", 1e9);
    assert_eq!(conv.texts.len(), 4);
    assert_eq!(conv.names[2], "traces.otf2[rank 2]");
    // The OpenMP thread of rank 0 is not a rank: said, not read.
    assert!(
        conv.notes.iter().any(|n| n.contains("1 location(s)")),
        "{:?}",
        conv.notes
    );
}

#[test]
fn computation_is_written_at_the_given_speed() {
    check_equivalent("p2p", 2.5e9);
}

#[test]
fn world_collectives_convert_to_simgrid_actions() {
    let conv = check_equivalent("collectives", 1e9);
    assert!(conv.notes.is_empty(), "{:?}", conv.notes);
}

#[test]
fn sub_communicators_translate_ranks_and_expand_collectives() {
    check_equivalent("split", 1e9);
}

fn error_of(dir: &Path) -> Error {
    convert(&dir.join("traces.otf2"), &|_| 1e9).unwrap_err()
}

#[test]
fn an_event_on_an_undefined_communicator_is_located() {
    let dir = write("undefined-comm", 1e9);
    let e = error_of(&dir);
    assert!(
        matches!(
            e,
            Error::Event {
                rank: 1,
                kind: EventError::UndefinedComm(42),
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("traces.otf2"), "{text}");
    assert!(text.contains("communicator 42 is not defined"), "{text}");
}

#[test]
fn undefined_regions_and_ranks_outside_the_communicator_are_errors() {
    let e = error_of(&write("undefined-region", 1e9));
    assert!(
        matches!(
            e,
            Error::Event {
                rank: 0,
                kind: EventError::UndefinedRegion(77),
                ..
            }
        ),
        "{e:?}"
    );
    let e = error_of(&write("rank-out-of-range", 1e9));
    assert!(
        matches!(
            e,
            Error::Event {
                rank: 0,
                kind: EventError::RankOutOfRange {
                    rank: 5,
                    size: 2,
                    ..
                },
                ..
            }
        ),
        "{e:?}"
    );
    let e = error_of(&write("no-mpi-ranks", 1e9));
    assert!(
        matches!(
            e,
            Error::Definitions {
                kind: DefError::NoMpiRanks,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn damaged_archives_are_refused_with_the_library_message() {
    // A truncated anchor file.
    let dir = write("p2p", 1e9);
    let anchor = dir.join("traces.otf2");
    let bytes = std::fs::read(&anchor).unwrap();
    std::fs::write(&anchor, &bytes[..bytes.len() / 2]).unwrap();
    let e = error_of(&dir);
    assert!(matches!(e, Error::Library { .. }), "{e:?}");
    assert!(e.to_string().contains("traces.otf2"), "{e}");
    // A corrupted one.
    let mut bad = bytes.clone();
    for b in bad.iter_mut().take(64) {
        *b = 0x5a;
    }
    std::fs::write(&anchor, &bad).unwrap();
    assert!(matches!(error_of(&dir), Error::Library { .. }));
    // The global definitions missing.
    std::fs::write(&anchor, &bytes).unwrap();
    std::fs::remove_file(dir.join("traces.def")).unwrap();
    let e = error_of(&dir);
    assert!(matches!(e, Error::Library { .. }), "{e:?}");
    // A rank's events missing.
    let dir = write("p2p", 1e9);
    std::fs::remove_file(dir.join("traces/2.evt")).unwrap();
    let e = error_of(&dir);
    assert!(matches!(e, Error::Library { .. }), "{e:?}");
    // A rank's events truncated.
    let dir = write("p2p", 1e9);
    let evt = dir.join("traces/1.evt");
    let bytes = std::fs::read(&evt).unwrap();
    std::fs::write(&evt, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let e = error_of(&dir);
    assert!(matches!(e, Error::Library { .. }), "{e:?}");
    // Not a file at all.
    let e = convert(&dir.join("nothing.otf2"), &|_| 1e9).unwrap_err();
    assert!(e.to_string().contains("no such file"), "{e}");
}
