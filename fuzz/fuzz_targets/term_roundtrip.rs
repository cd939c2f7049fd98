//! What the term parser accepts prints canonically and reads back to the same text
//! (print -> parse -> print is a fixed point).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_core::term::parse_term;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = parse_term("<fuzz>", src) {
        let printed = t.to_string();
        let again = parse_term("<fuzz>", &printed).expect("a printed term parses");
        assert_eq!(again.to_string(), printed, "print -> parse -> print is a fixed point");
    }
});
