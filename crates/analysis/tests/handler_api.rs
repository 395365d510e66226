//! A handler written only against the analysis crate's public API, run in the one pass beside
//! the ROS 2 model: it counts every event by class (checked against babeltrace2's counts in
//! `../shared/reference/event-counts`), and attributes each `rmw_publish` to the callback run it
//! happened in, through the context (checked against the ROS 2 pass's own attribution).

use rostrace_analysis::{At, Context, Fields, Handler, Processor, TraceInfo};
use rostrace_ctf::{Event, EventClass};
use std::collections::{BTreeMap, HashMap};

/// The shared test data (`$ROSTRACE_TEST_DATA`, else `../shared` beside the repository).
use rostrace_testkit::test_data as shared;

/// Events per class name, and publications per callback run.
#[derive(Default)]
struct Census {
    names: Vec<String>,
    publish: Vec<bool>,
    fields: Vec<Fields>,
    counts: BTreeMap<String, u64>,
    /// Callback run index → rmw_publish events made during it.
    publishes_in_run: HashMap<u32, u64>,
    outside_runs: u64,
    finished: bool,
}

impl Handler for Census {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        self.names.push(class.name.clone());
        self.publish.push(class.name.ends_with(":rmw_publish"));
        self.fields.push(Fields::of(class, &["message"]));
        Some(self.names.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, ev: &Event<'_>, at: &At, cx: &Context<'_>) {
        *self.counts.entry(self.names[token as usize].clone()).or_default() += 1;
        if self.publish[token as usize] {
            assert!(self.fields[token as usize].uint(ev, 0).is_some(), "rmw_publish has a message field");
            match cx.running(at) {
                Some(run) => *self.publishes_in_run.entry(run).or_default() += 1,
                None => self.outside_runs += 1,
            }
        }
    }

    fn finish(&mut self, cx: &Context<'_>) {
        assert!(!cx.ros2.runs.is_empty());
        self.finished = true;
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn a_users_handler_runs_in_the_pass() {
    rostrace_testkit::needs_test_data!();
    let trace = shared().join("traces/tc-ros2-example2");
    let (set, errors) = rostrace_ctf::TraceSet::open(&[&trace]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut p = Processor::standard();
    p.add(Census::default());
    let a = p.analyze(&set, Default::default(), |_, _| {});
    let census = a.get::<Census>().expect("the handler is there after the pass");
    assert!(census.finished);

    // Every event, by class: babeltrace2's counts.
    let want: BTreeMap<String, u64> =
        std::fs::read_to_string(shared().join("reference/event-counts/tc-ros2-example2.tsv"))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(n, name)| (name.trim().to_string(), n.trim().parse().unwrap()))
            .collect();
    assert_eq!(census.counts, want);
    assert_eq!(census.counts.values().sum::<u64>(), a.report.events);

    // Publications during callback runs: as the ROS 2 pass links them.
    let mut linked: HashMap<u32, u64> = HashMap::new();
    for pubn in a.pubs.iter().map(|p| &p.publication) {
        if pubn.ts_rmw().is_some() {
            if let Some(run) = pubn.in_run() {
                *linked.entry(run).or_default() += 1;
            }
        }
    }
    assert!(!census.publishes_in_run.is_empty());
    assert_eq!(census.publishes_in_run, linked);
}

/// A handler that wants nothing is never called, and the standard handlers (executor phases,
/// services, system analyses) leave the rest of the ROS 2 report as the plain pass makes it.
#[rostrace_testkit::needs(test_data)]
#[test]
fn handlers_do_not_change_the_ros2_report() {
    rostrace_testkit::needs_test_data!();
    struct Nothing;
    impl Handler for Nothing {
        fn subscribe(&mut self, _: &TraceInfo<'_>, _: &EventClass) -> Option<u32> {
            None
        }
        fn event(&mut self, _: u32, _: &Event<'_>, _: &At, _: &Context<'_>) {
            panic!("no event was asked for");
        }
    }
    let trace = shared().join("traces/tc-ros2-example2");
    let (set, _) = rostrace_ctf::TraceSet::open(&[&trace]);
    let mut p = Processor::new();
    p.add(Nothing);
    let plain = p.analyze(&set, Default::default(), |_, _| {});
    let standard = rostrace_analysis::analyze_traces(&set, |_, _| {});
    let json = |r: &rostrace_analysis::Report| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("system");
        v.as_object_mut().unwrap().remove("executor_threads");
        v.as_object_mut().unwrap().remove("services");
        v
    };
    assert_eq!(json(&plain.report), json(&standard.report));
    assert!(plain.report.executor_threads.is_empty() && !standard.report.executor_threads.is_empty());
}

/// Publications per callback run and events per class, written to split: each copy counts
/// the events of its part of the traces, the merge maps the part's run indices.
#[derive(Default, Clone)]
struct Splits {
    names: Vec<String>,
    publish: Vec<bool>,
    counts: BTreeMap<String, u64>,
    publishes_in_run: BTreeMap<u32, u64>,
}

impl Handler for Splits {
    fn subscribe(&mut self, _trace: &TraceInfo<'_>, class: &EventClass) -> Option<u32> {
        self.names.push(class.name.clone());
        self.publish.push(class.name.ends_with(":rclcpp_publish"));
        Some(self.names.len() as u32 - 1)
    }

    fn event(&mut self, token: u32, _ev: &Event<'_>, at: &At, cx: &Context<'_>) {
        *self.counts.entry(self.names[token as usize].clone()).or_default() += 1;
        if self.publish[token as usize] {
            if let Some(run) = cx.running(at) {
                *self.publishes_in_run.entry(run).or_default() += 1;
            }
        }
    }

    fn split(&self) -> Option<Box<dyn Handler + Send>> {
        Some(Box::new(self.clone()))
    }

    fn merge(&mut self, part: Box<dyn std::any::Any>, map: &rostrace_analysis::Part<'_>) {
        let part = part.downcast::<Splits>().expect("a copy of this handler");
        for (name, n) in part.counts {
            *self.counts.entry(name).or_default() += n;
        }
        for (run, n) in part.publishes_in_run {
            *self.publishes_in_run.entry(map.run(run)).or_default() += n;
        }
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn handlers_that_split_and_handlers_that_do_not_give_the_same_results_on_any_threads() {
    rostrace_testkit::needs_test_data!();
    // 15 traces: shared out over the threads.
    let (set, errors) = rostrace_ctf::TraceSet::open(&[shared().join("traces/caret-analyze-samples")]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(set.traces.len() > 2);
    let run = |jobs: usize, census: bool| {
        let mut p = Processor::standard();
        p.set_jobs(jobs);
        p.add(Splits::default());
        if census {
            p.add(Census::default());
        }
        let a = p.analyze(&set, Default::default(), |_, _| {});
        let s = a.get::<Splits>().unwrap();
        let report = serde_json::to_string(&a.report).unwrap();
        let census = a.get::<Census>().map(|c| (c.counts.clone(), c.finished));
        (s.counts.clone(), s.publishes_in_run.clone(), report, census)
    };
    let one = run(1, false);
    assert!(one.1.len() > 10, "publications in runs: {}", one.1.len());
    for jobs in [2, 3] {
        // Split by trace.
        assert!(run(jobs, false) == one, "-j {jobs}");
    }
    // A handler that does not split keeps the pass on one thread: the same results.
    let with_census = run(1, true);
    assert!(with_census.3.as_ref().is_some_and(|c| c.1));
    assert!(run(2, true) == with_census);
    assert_eq!((&with_census.0, &with_census.1, &with_census.2), (&one.0, &one.1, &one.2));
}
