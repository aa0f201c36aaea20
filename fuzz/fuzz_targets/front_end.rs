//! Fuzz target: the front end (parse + check, `driver::front_end`) on arbitrary bytes.
//! Invalid UTF-8 is replaced (U+FFFD) rather than skipped, so every input reaches the
//! lexer; the CLI reports such files as `io.error` before parsing, but the parser and
//! checker must survive any text. It runs on a thread with the CLI's stack size, as
//! `idf-verify` does. Any panic, abort or stack overflow is a bug.
#![no_main]

use idf_verify::driver::{front_end, with_big_stack};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    with_big_stack(|| {
        let _ = front_end(&text);
    });
});
