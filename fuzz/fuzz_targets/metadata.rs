//! Fuzzes the metadata reader: packetized or text metadata bytes to a schema.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mt) = rostrace_ctf::metadata::metadata_text(data) {
        let _ = rostrace_ctf::metadata::parse_schema(&mt.text);
    }
});
