//! Data age: how old the data behind each message a node takes is, per source of that data.
//!
//! A *source* is a node publishing a topic that none of its inputs feeds (a sensor driver, a
//! timer of its own): where data enters the system. Every path from a source to the node is
//! followed message by message; a record that went the whole way says that the message the node
//! took (its callback run) holds data the source published that long before. Where several
//! paths bring one source's data to one message, the youngest counts.

use super::arch::Architecture;
use super::index::PathIndex;
use super::records::{PathRecords, RecordStatus};
use super::search::{search, SearchLimits, SearchOutcome};
use super::spec::{Endpoint, PathOptions, PathSpec};
use super::streamed::PathOutput;
use crate::stats::Stats;
use serde::Serialize;
use std::collections::BTreeMap;

impl Architecture {
    /// The sources: (node, topic) where the node publishes the topic and no path of the node
    /// leads into it, in the order of the nodes and their topics.
    pub fn origins(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for p in &n.publishes {
                if !n.paths.iter().any(|np| np.publish == p.topic) {
                    out.push((i, p.topic.clone()));
                }
            }
        }
        out
    }
}

/// The paths along which the data age at a node is measured ([`age_paths`]).
#[derive(Debug, Clone)]
pub struct AgePaths {
    /// The node.
    pub sink: String,
    /// The sources: (node, topic).
    pub sources: Vec<(String, String)>,
    /// The paths, each with its source (index in `sources`).
    pub paths: Vec<(usize, PathSpec)>,
    /// Where the search stopped.
    pub outcome: SearchOutcome,
}

/// The paths from every source (of the nodes `from`, every source when empty) to the node `to`,
/// each starting on its source's topic. An error names `labels[0]` (`from`) or `labels[1]` (`to`)
/// when a name is not a node of the trace.
pub fn age_paths(
    arch: &Architecture,
    from: &[String],
    to: &str,
    labels: [&str; 2],
    limits: SearchLimits,
) -> Result<AgePaths, String> {
    let node = |name: &str, label: &str| match arch.resolve(name, label)? {
        Endpoint::Node(i) => Ok(i),
        Endpoint::Topic(t) => Err(format!("{label} {t}: a topic; give a node")),
    };
    let sink = node(to, labels[1])?;
    let wanted: Vec<usize> = from.iter().map(|f| node(f, labels[0])).collect::<Result<_, _>>()?;
    let origins: Vec<(usize, String)> =
        arch.origins().into_iter().filter(|(n, _)| *n != sink && (wanted.is_empty() || wanted.contains(n))).collect();
    let mut paths = Vec::new();
    let mut outcome = SearchOutcome::default();
    let mut last = usize::MAX;
    for &(n, _) in &origins {
        if n == last {
            continue;
        }
        last = n;
        let o = search(arch, &Endpoint::Node(n), &[], &Endpoint::Node(sink), limits, |p| {
            if let Some(k) = origins.iter().position(|(m, t)| *m == n && p.topics.first() == Some(t)) {
                paths.push((k, p));
            }
            true
        });
        outcome.truncated_depth |= o.truncated_depth;
        outcome.truncated_paths |= o.truncated_paths;
        outcome.truncated_work |= o.truncated_work;
    }
    let sources = origins.into_iter().map(|(n, t)| (arch.nodes[n].name.clone(), t)).collect();
    Ok(AgePaths { sink: arch.nodes[sink].name.clone(), sources, paths, outcome })
}

/// The youngest age of each source's data in each message the node took, gathered from the
/// paths' records (in memory: [`data_age`]; as a streamed path's output: [`AgeTable::current`]).
#[derive(Debug)]
pub struct AgeTable {
    of_path: Vec<usize>,
    sources: usize,
    /// By the node's callback start (or end) of each message: each source's age (ns).
    inputs: BTreeMap<i64, Vec<Option<i64>>>,
    current: usize,
}

impl AgeTable {
    /// An empty table for `p`'s paths.
    pub fn new(p: &AgePaths) -> AgeTable {
        AgeTable {
            of_path: p.paths.iter().map(|x| x.0).collect(),
            sources: p.sources.len(),
            inputs: BTreeMap::new(),
            current: 0,
        }
    }

    /// A record of path `k`; only one that went the whole way counts.
    pub fn add(&mut self, k: usize, row: &[Option<i64>]) {
        if !PathRecords::is_complete(row) {
            return;
        }
        let (Some(Some(first)), Some(Some(last))) = (row.first(), row.last()) else { return };
        let ages = self.inputs.entry(*last).or_insert_with(|| vec![None; self.sources]);
        let age = &mut ages[self.of_path[k]];
        *age = Some(age.map_or(last - first, |a| a.min(last - first)));
    }

    /// The table, as the output of path `k` (its records go to [`AgeTable::add`]).
    pub fn current(&mut self, k: usize) -> &mut AgeTable {
        self.current = k;
        self
    }

    /// The data age per source, and per message taken.
    pub fn finish(self, p: &AgePaths) -> DataAge {
        let sources = p
            .sources
            .iter()
            .enumerate()
            .map(|(s, (node, topic))| {
                let mut ages: Vec<i64> = self.inputs.values().filter_map(|a| a[s]).collect();
                SourceAge {
                    node: node.clone(),
                    topic: topic.clone(),
                    paths: p.paths.iter().filter(|x| x.0 == s).map(|x| x.1.label()).collect(),
                    messages: ages.len(),
                    age: Stats::of(&mut ages),
                }
            })
            .collect();
        let inputs = self.inputs.into_iter().map(|(at_ns, ages_ns)| InputAge { at_ns, ages_ns }).collect();
        DataAge { sink: p.sink.clone(), sources, inputs }
    }
}

impl PathOutput for AgeTable {
    fn record(&mut self, _: u64, row: &[Option<i64>], _: RecordStatus) {
        self.add(self.current, row);
    }
}

/// The data age at a node.
#[derive(Debug, Serialize)]
pub struct DataAge {
    /// The node.
    pub sink: String,
    /// Per source.
    pub sources: Vec<SourceAge>,
    /// Each message the node took with data of a source: when (its callback's start, or end
    /// with `include_last_callback`), and the age of each source's data in it (in the order of
    /// `sources`; null: none of that source's).
    pub inputs: Vec<InputAge>,
}

/// How old one source's data is in the messages a node takes.
#[derive(Debug, Serialize)]
pub struct SourceAge {
    /// The source node.
    pub node: String,
    /// The topic it publishes.
    pub topic: String,
    /// The paths from it to the node.
    pub paths: Vec<String>,
    /// The messages taken that hold its data.
    pub messages: usize,
    /// Their data's age (ns): from the source's publication (or its callback's start, with
    /// `include_first_callback`).
    pub age: Stats,
}

/// One message a node took, and the age of each source's data in it.
#[derive(Debug, Serialize)]
pub struct InputAge {
    /// When (ns).
    pub at_ns: i64,
    /// Per source (ns).
    pub ages_ns: Vec<Option<i64>>,
}

/// The data age at `p.sink`, its paths followed in `index`'s analysis.
pub fn data_age(index: &PathIndex, arch: &Architecture, p: &AgePaths, opt: PathOptions) -> DataAge {
    let mut t = AgeTable::new(p);
    for (k, (_, spec)) in p.paths.iter().enumerate() {
        if let Ok(r) = index.records(arch, spec, opt) {
            r.rows.iter().for_each(|row| t.add(k, row));
        }
    }
    t.finish(p)
}
