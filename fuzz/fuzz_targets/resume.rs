//! The download resume logic against a server played from the input: cuts, ignored and
//! other ranges, 416s, errors, lies about sizes and versions. The bytes held never pass
//! the size limit, the requests and bytes never pass the budget, and a download said
//! complete after truthful answers holds exactly the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wikisuggest_resume::script;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if let Err(broken) = script::play(rest, mode % 2 == 0) {
        panic!("{broken}");
    }
});
