//! The safe Rust API records the same events as the C ABI; strings that are not UTF-8 are kept
//! byte for byte. (One test: the tracer is set up once per process.)

#[test]
fn rust_api_records_events() {
    let tmp = rostrace_testkit::TempDir::new("rustapi");
    let root = tmp.join("session");
    std::env::set_var("ROSTRACE_SESSION_DIR", &root);
    assert_eq!(tracetools::tracer::mode(), tracetools::tracer::Mode::Embedded);
    tracetools::api::rcl_init(0x1);
    tracetools::api::rcl_node_init(0x10, 0x11, b"rust_node", b"/caf\xe9");
    tracetools::api::rmw_publisher_init(0x20, &[5; 16]);
    tracetools::api::rcl_publisher_init(0x21, 0x10, 0x20, b"/topic", 7);
    tracetools::api::message_link_partial_sync(&[1, 2, 3], &[4]);
    tracetools::api::ros2_caret_caret_init(123, b"rolling");
    std::thread::spawn(|| tracetools::api::callback_start(0x99, true)).join().unwrap();
    let dir = tracetools::tracer::trace_dir().unwrap();
    tracetools::tracer::flush();
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&dir]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut names = Vec::new();
    let mut events = set.events();
    while let Some(ev) = events.next() {
        let ev = ev.unwrap();
        names.push(ev.name().to_string());
        match ev.name() {
            "ros2:rcl_init" => assert_eq!(ev.field("version").unwrap().as_str().unwrap(), tracetools::VERSION),
            "ros2:rcl_node_init" => assert_eq!(ev.field("namespace").unwrap().as_bytes().unwrap(), b"/caf\xe9"),
            "ros2:rcl_publisher_init" => assert_eq!(ev.field("queue_depth").unwrap().as_u64(), Some(7)),
            "ros2:rmw_publisher_init" => {
                assert_eq!(ev.field("gid").unwrap().as_array().unwrap().to_u64_vec(), vec![5; 16])
            }
            "ros2:message_link_partial_sync" => {
                assert_eq!(ev.field("subs").unwrap().as_array().unwrap().to_u64_vec(), [1, 2, 3]);
                assert_eq!(ev.field("pubs").unwrap().as_array().unwrap().to_u64_vec(), [4]);
            }
            "ros2_caret:caret_init" => assert_eq!(ev.field("distribution").unwrap().as_str().unwrap(), "rolling"),
            "ros2:callback_start" => assert_eq!(ev.field("is_intra_process").unwrap().as_i64(), Some(1)),
            other => panic!("unexpected {other}"),
        }
    }
    names.sort();
    assert_eq!(names.len(), 7, "{names:?}");
}
