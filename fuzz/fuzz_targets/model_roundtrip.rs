//! What the model parser accepts prints canonically and reads back to the same text
//! (print -> parse -> print is a fixed point).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_core::model::parse_model;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match parse_model(src) {
        Ok(e) => {
            let printed = e.to_string();
            let again = parse_model(&printed).expect("a printed model parses");
            // The fixed point is promised below the expansion cap: beyond it, how far a
            // product of sums was expanded depends on the order it was built in.
            if e.is_canonical_size() {
                assert_eq!(again.to_string(), printed, "print -> parse -> print is a fixed point");
            }
            let _ = e.eval_at(&[("x", 1024.0), ("p", 8.0), ("n", 4.0), ("m", 2.0)]);
            let _ = e.leading();
            let _ = e.extrap();
        }
        Err(d) => {
            assert!(d.span.start <= src.len());
            let _ = d.render();
        }
    }
});
