//! `rostrace check`: a trace against an expectation file (see `rostrace_analysis::check`), one line per
//! expectation, JUnit XML and JSON; `--suggest` writes a file a good run passes.

use crate::args::{Input, StreamArgs, TraceArgs};
use crate::format::name as esc;
use crate::out::{emit, fail};
use rostrace_analysis::check::{self, Outcome, Status};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `rostrace check`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    traces: TraceArgs,
    /// The expectation file (YAML; docs/check.md).
    #[arg(long, value_name = "FILE", required_unless_present = "suggest", conflicts_with = "suggest")]
    expect: Option<PathBuf>,
    /// Write an expectation file that this trace passes to standard output (limits: the values
    /// measured with a margin).
    #[arg(long)]
    suggest: bool,
    /// Also write the outcomes as JUnit XML to FILE (for CI test reports).
    #[arg(long, value_name = "FILE", conflicts_with = "suggest")]
    junit: Option<PathBuf>,
    /// Also write the outcomes as JSON to FILE (`-`: standard output, instead of the text).
    #[arg(long, value_name = "FILE", conflicts_with = "suggest")]
    json: Option<PathBuf>,
    /// (`--suggest` analyses in memory: it searches the longest paths. A streamed analysis
    /// follows the paths of expectations over the recording read a second time.)
    #[command(flatten)]
    stream: StreamArgs,
}

/// The JSON of `--json`.
#[derive(Serialize)]
struct Out<'a> {
    expect: String,
    passed: usize,
    failed: usize,
    not_in_trace: usize,
    outcomes: &'a [Outcome],
}

/// Runs the command.
pub fn run(a: Args) -> std::io::Result<ExitCode> {
    let expect = match a.expect.as_deref().map(read_expectations).transpose() {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    // The longest paths are only searched to suggest them. Without paths, nothing but the report
    // is read: the analysis may be streamed.
    let paths =
        expect.as_ref().is_none_or(|x| x.items.iter().any(|e| matches!(e.subject, check::Subject::Path { .. })));
    let mut input = Input::new(&a.traces).options(|o| {
        o.longest_paths = a.suggest;
        if !paths {
            o.release_tables = true;
        }
        if !a.suggest {
            a.stream.apply(o);
        }
    });
    // (With paths, a consumer of the slices: streamed when the recording is long, the tables kept
    // when not.)
    let loaded = if paths && !a.suggest { input.load_streaming(|_| {}) } else { input.load() };
    let Some(loaded) = loaded else {
        return Ok(ExitCode::from(1));
    };
    let mut clean = loaded.clean();
    let an = loaded.analysis;
    // A streamed analysis's paths: followed over the recording read again.
    let mut followed = None;
    if let (Some(_), Some(expect)) = (&an.report.streamed, &expect) {
        let arch = an.architecture();
        // Each path as written, parsed (one the architecture does not have is the outcome's
        // note, when checked).
        let named: Vec<_> = check::paths_of(expect)
            .into_iter()
            .filter_map(|(p, opt)| Some(((p.clone(), opt), (arch.parse_path(&p, "path").ok()?, opt))))
            .collect();
        if !named.is_empty() {
            let specs: Vec<_> = named.iter().map(|x| x.1.clone()).collect();
            match crate::follow::follow_streamed(&mut input, &arch, &specs, &[], &mut crate::follow::Nowhere) {
                Ok((done, ok)) => {
                    clean &= ok;
                    let pairs = named.into_iter().zip(done).filter_map(|((key, _), d)| Some((key, d?.summary())));
                    followed = Some(pairs.collect::<check::Followed>());
                }
                Err(e) => return fail(e),
            }
        }
    }
    let Some(expect) = expect else {
        let about: Vec<String> = a.traces.traces.iter().map(|t| t.display().to_string()).collect();
        crate::out::out!("{}", check::suggest(&an, &esc(&about.join(", "))))?;
        return Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) });
    };
    let outcomes = check::evaluate_followed(&an, &expect, a.traces.jobs, followed.as_ref());
    let file = a.expect.as_deref().unwrap_or(Path::new("")).display().to_string();
    let count = |s: Status| outcomes.iter().filter(|o| o.status == s).count();
    let out = Out {
        expect: file.clone(),
        passed: count(Status::Pass),
        failed: count(Status::Fail),
        not_in_trace: count(Status::NotInTrace),
        outcomes: &outcomes,
    };
    if let Some(j) = &a.junit {
        if let Err(e) = std::fs::write(j, junit(&file, &outcomes)) {
            return fail(format!("--junit {}: {e}", j.display()));
        }
    }
    if let Err(e) = emit(a.json.as_deref(), &out, || render(&out))? {
        return fail(e);
    }
    let all_pass = out.passed == outcomes.len();
    Ok(if all_pass && clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Reads and parses the expectation file `p`; the error names the file, and the line and the
/// key when the file cannot be parsed (the line and byte when it is not UTF-8).
pub fn read_expectations(p: &Path) -> Result<check::Expectations, String> {
    let bytes = std::fs::read(p).map_err(|e| format!("--expect {}: {e}", p.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        format!("{}: line {line} (byte {at}): not UTF-8", p.display())
    })?;
    check::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
}

fn render(out: &Out<'_>) -> String {
    let mut s = String::new();
    for o in out.outcomes {
        let tag = match o.status {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::NotInTrace => "MISSING",
        };
        let _ = writeln!(s, "{tag:<7}  {}: {} {}  [line {}]", esc(&o.subject), o.metric, o.verdict(), o.line);
    }
    let _ = writeln!(
        s,
        "\n{} expectation(s): {} passed, {} failed, {} not in the trace",
        out.outcomes.len(),
        out.passed,
        out.failed,
        out.not_in_trace
    );
    s
}

/// `s` as XML character data or attribute text: control characters escaped as in the text
/// (`\e`, `\x01`, ...), and the noncharacters U+FFFE and U+FFFF as their UTF-8 bytes
/// (`\xef\xbf\xbe`), so that every character left is one XML 1.0 allows (a Rust string has no
/// lone surrogate); then the five XML characters.
fn xml(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in esc(s).chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\u{fffe}' | '\u{ffff}' => {
                for b in c.to_string().bytes() {
                    let _ = write!(o, "\\x{b:02x}");
                }
            }
            c => o.push(c),
        }
    }
    o
}

/// The outcomes as JUnit XML, valid against the Jenkins/Ant JUnit schema (junit-10.xsd): one test
/// case per expectation (class: its subject, name: its metric), a failure for each that failed or
/// is not in the trace, with the value and limit, and the file's line in its text (the schema has
/// no place for a test case's file or line).
fn junit(file: &str, outcomes: &[Outcome]) -> String {
    let failures = outcomes.iter().filter(|o| o.status != Status::Pass).count();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let head = format!("tests=\"{}\" failures=\"{failures}\" errors=\"0\"", outcomes.len());
    let _ = writeln!(s, "<testsuites name=\"rostrace check\" {head}>");
    let _ = writeln!(s, "  <testsuite name=\"{0}\" file=\"{0}\" {head} skipped=\"0\">", xml(file));
    for o in outcomes {
        let _ = write!(s, "    <testcase classname=\"{}\" name=\"{}\"", xml(&o.subject), xml(&o.metric));
        match o.status {
            Status::Pass => s.push_str("/>\n"),
            Status::Fail | Status::NotInTrace => {
                let kind = if o.status == Status::Fail { "fail" } else { "not_in_trace" };
                let _ = writeln!(
                    s,
                    ">\n      <failure type=\"{kind}\" message=\"{}\">{}:{}</failure>\n    </testcase>",
                    xml(&format!("{} {}", o.metric, o.verdict())),
                    xml(file),
                    o.line
                );
            }
        }
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rostrace_analysis::check::{Bound, Unit};

    #[test]
    fn junit_escapes_names() {
        let o = Outcome {
            subject: "topic /a<&>\"'\x1b".into(),
            metric: "latency p99".into(),
            status: Status::Fail,
            measured: Some(2e6),
            unit: Unit::Ns,
            limit: Bound { low: None, high: Some(1e6) },
            line: 3,
            note: None,
        };
        let x = junit("e.yaml", &[o]);
        assert!(x.contains("classname=\"topic /a&lt;&amp;&gt;&quot;&apos;\\e\""), "{x}");
        assert!(x.contains("message=\"latency p99 2.00 ms (at most 1.00 ms)\">e.yaml:3</failure>"), "{x}");
        assert!(x.contains("tests=\"1\" failures=\"1\""), "{x}");
    }

    /// Whether XML 1.0 allows `c` in a document (its `Char` production).
    fn xml_char(c: char) -> bool {
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
    }

    /// Every character XML 1.0 forbids in a name or the file's is escaped; what it allows is kept.
    #[test]
    fn junit_holds_only_characters_xml_allows() {
        let forbidden: String =
            ('\0'..='\u{1f}').chain(['\u{7f}', '\u{85}', '\u{9f}', '\u{fffe}', '\u{ffff}']).collect();
        let allowed = "é\u{a0}\u{d7ff}\u{e000}\u{fffd}\u{10000}\u{10ffff}";
        let o = Outcome {
            subject: format!("topic /a{forbidden}{allowed}"),
            metric: "latency\u{fffe} p99".into(),
            status: Status::NotInTrace,
            measured: None,
            unit: Unit::Ns,
            limit: Bound { low: None, high: Some(1e6) },
            line: 3,
            note: None,
        };
        let x = junit("e\u{ffff}.yaml", &[o]);
        assert!(x.chars().all(xml_char), "{x:?}");
        assert!(x.contains(&format!("\\x1f\\x7f\\xc2\\x85\\xc2\\x9f\\xef\\xbf\\xbe\\xef\\xbf\\xbf{allowed}\"")), "{x}");
        assert!(x.contains("name=\"latency\\xef\\xbf\\xbe p99\""), "{x}");
        assert!(x.contains(">e\\xef\\xbf\\xbf.yaml:3</failure>"), "{x}");
    }
}
