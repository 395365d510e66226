//! Metadata declaring very many event classes: the duplicate-id check is one set look-up per
//! class, so 2·10^5 classes parse (a scan per class would be quadratic and take minutes), and a
//! duplicate among them is still refused with its id.

use rostrace_ctf::metadata::parse_schema;

const N: u64 = 200_000;

fn metadata(ids: impl Iterator<Item = u64>) -> String {
    let mut s = String::from(
        "/* CTF 1.8 */\n\
         typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n\
         trace { major = 1; minor = 8; byte_order = le; };\n\
         stream { id = 0; event.header := struct { uint32_t id; }; };\n",
    );
    for (n, id) in ids.enumerate() {
        s.push_str(&format!(
            "event {{ name = \"ros2:ev{n}\"; id = {id}; stream_id = 0; fields := struct {{ uint32_t v; }}; }};\n"
        ));
    }
    s
}

#[test]
fn two_hundred_thousand_event_classes_parse() {
    let schema = parse_schema(&metadata(0..N)).unwrap_or_else(|e| panic!("metadata refused: {e:?}"));
    assert_eq!(schema.event_classes().count() as u64, N);
    let last = schema.event_classes().find(|ec| ec.id == N - 1).expect("the last class is there");
    assert_eq!(last.name, format!("ros2:ev{}", N - 1));
}

#[test]
fn a_duplicate_id_among_many_is_named() {
    // The last class repeats an id declared near the start.
    let ids = (0..N - 1).chain(std::iter::once(7));
    let err = match parse_schema(&metadata(ids)) {
        Ok(_) => panic!("a duplicate event id was accepted"),
        Err(e) => e,
    };
    assert!(err.message.contains("event id 7 declared twice"), "{}", err.message);
}
