//! What a program's `-j FILE` holds: argp's JSON (json-c's dialect). Any text is
//! refused or taken without a panic, nesting deeper than json-c's limit is refused
//! (no unbounded recursion), and what is taken reads back the same once printed.
#![no_main]

use doca_capi::argp::jsonc;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = jsonc::parse(text) {
        let printed = v.to_string();
        assert_eq!(
            jsonc::parse(&printed).as_ref(),
            Ok(&v),
            "a value taken reads back from its printed form"
        );
    }
});
