//! The callbacks and topics of consecutive slices of time ([`report::slice`]) add up to those
//! of the whole: runs by their start, publications and messages by their publication, takes
//! by their time.

use rostrace_analysis::View;
use rostrace_analysis::{analyze_window, report, Report, Window};
use rostrace_ctf::TraceSet;
use std::collections::BTreeMap;

/// Per callback and topic (by name): runs and their time, publications, takes, messages matched
/// with a latency and its sum, and messages per publisher → subscriber pair.
fn counts(r: &Report) -> BTreeMap<String, (u64, i128)> {
    let mut out: BTreeMap<String, (u64, i128)> = BTreeMap::new();
    let mut add = |k: String, n: u64, sum: i128| {
        let e = out.entry(k).or_default();
        e.0 += n;
        e.1 += sum;
    };
    for c in &r.callbacks {
        add(format!("callback {} {} {:#x}", c.vpid, c.symbol, c.address), c.duration_ns.count, c.duration_ns.sum);
    }
    for t in &r.topics {
        add(format!("publishes {}", t.name), t.publishes, 0);
        add(format!("takes {}", t.name), t.takes, 0);
        add(format!("latency {}", t.name), t.pub_to_callback_ns.count, t.pub_to_callback_ns.sum);
        for p in &t.pairs {
            let k = format!("pair {} {} {}", t.name, p.publisher_node, p.subscription_node);
            add(k, p.count, p.pub_to_callback_ns.sum);
        }
    }
    out.retain(|_, v| v.0 > 0);
    out
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn slices_add_up_to_the_whole() {
    rostrace_testkit::needs_test_data!();
    for name in ["caret-demos-e2e-2021", "tc-ros2-example2"] {
        let dir = rostrace_testkit::test_data().join("traces").join(name);
        let (set, errors) = TraceSet::open(&[&dir]);
        assert!(errors.is_empty(), "{errors:?}");
        let a = analyze_window(&set, Window::default(), |_, _| {});
        let (b, e) = (a.report.begin_ns.unwrap(), a.report.end_ns.unwrap());
        let cuts = [i64::MIN, b + (e - b) / 3, b + (e - b) / 2, e - (e - b) / 10, i64::MAX];
        let mut sum: BTreeMap<String, (u64, i128)> = BTreeMap::new();
        let mut parts = 0;
        for w in cuts.windows(2) {
            let part = counts(&report::slice(&View::from(&a), w[0], w[1]));
            parts += usize::from(!part.is_empty());
            for (k, (n, s)) in part {
                let e = sum.entry(k).or_default();
                e.0 += n;
                e.1 += s;
            }
        }
        assert_eq!(parts, 4, "{name}: every slice has something");
        let whole = counts(&a.report);
        assert!(whole.keys().any(|k| k.starts_with("latency")), "{name}");
        assert_eq!(sum, whole, "{name}");
    }
}
