//! `rostrace report`: the HTML report opens in headless Chromium with no error, draws its plots,
//! and shows the numbers `rostrace analyze --json` gives.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn screenshot_is_not_blank(html: &Path, dir: &Path) -> u64 {
    let blank = dir.join("blank.html");
    std::fs::write(&blank, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let (a, b) = (dir.join("report.png"), dir.join("blank.png"));
    chromium_screenshot(html, &a, 1400, 1600);
    chromium_screenshot(&blank, &b, 1400, 1600);
    let (a, b) = (std::fs::metadata(&a).unwrap().len(), std::fs::metadata(&b).unwrap().len());
    assert!(a > 10 * b, "the screenshot looks blank: {a} bytes, a blank page {b}");
    a
}

#[rostrace_testkit::needs(chromium, test_data)]
#[test]
fn report_renders_in_chromium_with_the_analysis_numbers() {
    if !require(have_chromium(), "chromium") {
        return;
    }
    for name in ["caret-demos-e2e-jazzy", "tum-autoware-carla"] {
        let Some(t) = rostrace_testkit::test_data_path(Path::new("traces").join(name)) else { return };
        let dir = TempDir::new("report");
        let html = dir.join("report.html");
        let out = rostrace().arg("report").arg(&t).arg("-o").arg(&html).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let r = analyze_json(&[], &[&t]);
        let dom = check_report(&html, &r);
        if r["flows_matched"].as_u64() > Some(0) {
            assert!(attr(&dom, "data-plot=\"topic-time\"", "data-drawn").is_some_and(|d| d != "0"));
            assert!(dom.contains("data-table=\"paths\""), "the longest paths");
            // The first path with messages that went the whole way: a point per message.
            let p = r["longest_paths"]["paths"].as_array().unwrap().iter().find(|p| p["complete"].as_u64() > Some(0));
            let want = p.unwrap()["latency"]["count"].to_string();
            assert!(attr(&dom, "data-plot=\"path-segments\"", "data-drawn").is_some_and(|d| d != "0"));
            // Latency over time, CARET's message-flow plot and stacked bars: a point, a line, a
            // bar per message.
            for plot in ["path-time", "path-flow", "path-stack"] {
                assert_eq!(attr(&dom, &format!("data-plot=\"{plot}\""), "data-drawn"), Some(want.clone()), "{plot}");
            }
            // The response time (case `all`, shown first) as `rostrace e2e` gives it.
            let path = &p.unwrap()["path"];
            let (nodes, topics) = (path["nodes"].as_array().unwrap(), path["topics"].as_array().unwrap());
            let mut spec: Vec<&str> = Vec::new();
            for (i, n) in nodes.iter().enumerate() {
                if i > 0 {
                    spec.push(topics[i - 1].as_str().unwrap());
                }
                spec.push(n.as_str().unwrap());
            }
            let out = rostrace()
                .arg("e2e")
                .arg(&t)
                .args(["--path", &spec.join(","), "--case", "all", "--json", "-"])
                .output()
                .unwrap();
            let e2e: Value = serde_json::from_slice(&out.stdout).unwrap();
            let all = e2e["response_time"][0]["stats"]["count"].to_string();
            assert_eq!(attr(&dom, "data-plot=\"path-rt-time\"", "data-drawn"), Some(all));
        }
        let png = screenshot_is_not_blank(&html, dir.path());
        // Figures, not assertions: size and the page's own rendering time.
        eprintln!(
            "{name}: report {:.1} MB, rendered in {} ms (headless Chromium), screenshot {png} bytes",
            std::fs::metadata(&html).unwrap().len() as f64 / 1e6,
            attr(&dom, "<body", "data-render-ms").unwrap_or_default()
        );
        if std::env::var_os("ROSTRACE_UPDATE_SCREENSHOTS").is_some() {
            chromium_screenshot(&html, &repo().join(format!("docs/report-{name}.png")), 1400, 1500);
            if name == "caret-demos-e2e-jazzy" {
                // The paths section alone.
                let page = std::fs::read_to_string(&html).unwrap();
                let paths = dir.join("paths.html");
                std::fs::write(
                    &paths,
                    page.replacen("</style>", "details.section:not(#paths){display:none}</style>", 1),
                )
                .unwrap();
                chromium_screenshot(&paths, &repo().join(format!("docs/report-{name}-paths.png")), 1400, 1900);
            }
        }
    }
}

#[rostrace_testkit::needs(test_data)]
#[test]
fn report_errors_name_the_output() {
    let Some(t) = rostrace_testkit::test_data_path("traces/caret-demos-e2e-jazzy") else { return };
    let out = rostrace().arg("report").arg(&t).args(["-o", "/proc/rostrace/r.html"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output /proc/rostrace/r.html"));
}

/// `-o -` writes the report to standard output (as `--json -` does), not to a file named `-`.
#[test]
fn report_output_dash_is_standard_output() {
    let t = shared().join("traces/caret-demos-e2e-jazzy");
    if !require(t.exists(), &t.display().to_string()) {
        return;
    }
    let dir = TempDir::new("report-dash");
    let out = rostrace().current_dir(dir.path()).arg("report").arg(&t).args(["-o", "-"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("report written to standard output"), "{err}");
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"),
        "{}",
        &html[..html.len().min(200)]
    );
    assert!(!dir.join("-").exists(), "no file named -");
}

/// The thresholds of the comparison without `--baseline` would do nothing: refused, naming them;
/// a value out of range is refused too.
#[rostrace_testkit::needs(test_data)]
#[test]
fn report_thresholds_need_a_baseline() {
    let Some(t) = rostrace_testkit::test_data_path("traces/caret-demos-e2e-jazzy") else { return };
    for arg in ["--alpha", "--min-delta", "--min-change"] {
        let out = rostrace().arg("report").arg(&t).args([arg, "0.5", "-o", "/dev/null"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(arg) && err.contains("--baseline"), "{arg}: {err}");
    }
    let mut cmd = rostrace();
    let out =
        cmd.arg("report").arg(&t).arg("--baseline").arg(&t).args(["--alpha", "2", "-o", "/dev/null"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--alpha 2: not in (0, 1]"));
}

/// Names that HTML's script parser reads specially (`<!--<script>` puts it in its "double
/// escaped" state, where `</script>` no longer ends the element) do not blank the report: here
/// in the trace directory's name, which the report shows as its title.
#[rostrace_testkit::needs(chromium, test_data)]
#[test]
fn report_renders_whatever_the_names_hold() {
    if !require(have_chromium(), "chromium") {
        return;
    }
    let Some(src) = rostrace_testkit::test_data_path("traces/rosworld2021-pingpong") else { return };
    let dir = TempDir::new("report-names");
    let t = dir.join("<!--<script>&");
    rostrace_testkit::copy_writable(&src, &t);
    let html = dir.join("report.html");
    let out = rostrace().arg("report").arg(&t).arg("-o").arg(&html).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    let data = &page[page.find("id=\"data\">").unwrap()..];
    let data = &data[..data.find("</script>").unwrap()];
    assert!(!data.contains("<!--") && !data.contains("<script"), "the embedded data is escaped");
    let r = analyze_json(&[], &[&t]);
    check_report(&html, &r);
    screenshot_is_not_blank(&html, dir.path());
}

/// At Autoware's size: the node graph opens on one node's neighbourhood from the page's address
/// (`#graph=NAME`, as a click on the node sets it), and the timeline has a legend.
#[rostrace_testkit::needs(chromium, test_data)]
#[test]
fn report_at_autoware_scale_shows_a_neighbourhood_and_a_legend() {
    if !require(have_chromium(), "chromium") {
        return;
    }
    let Some(t) = rostrace_testkit::test_data_path("traces/tum-autoware-carla") else { return };
    let dir = TempDir::new("report-scale");
    let html = dir.join("report.html");
    let out = rostrace().arg("report").arg(&t).arg("-o").arg(&html).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r = analyze_json(&[], &[&t]);
    let dom = chromium_dom(&html);
    let whole: usize = attr(&dom, "data-plot=\"graph\"", "data-drawn").unwrap().parse().unwrap();
    // A node publishing a topic that has subscribers, and the topics and nodes next to it.
    let topics = r["topics"].as_array().unwrap();
    let infra = ["/rosout", "/parameter_events", "/clock"];
    let busy = |t: &&Value| {
        !infra.contains(&t["name"].as_str().unwrap())
            && !t["publishers"].as_array().unwrap().is_empty()
            && !t["subscribers"].as_array().unwrap().is_empty()
    };
    let node = topics.iter().find(busy).unwrap()["publishers"][0].as_str().unwrap().to_string();
    let near: std::collections::BTreeSet<&str> = topics
        .iter()
        .filter(busy)
        .filter(|t| {
            [&t["publishers"], &t["subscribers"]].iter().any(|l| l.as_array().unwrap().iter().any(|n| n == &node))
        })
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let enc: String = node
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    let focused = chromium_dom(std::path::Path::new(&format!("{}#graph={enc}", html.display())));
    assert_eq!(attr(&focused, "class=\"graph\"", "data-shown"), Some(near.len().to_string()), "{node}: {near:?}");
    let drawn: usize = attr(&focused, "data-plot=\"graph\"", "data-drawn").unwrap().parse().unwrap();
    assert!(drawn < whole && drawn > near.len(), "{node}: {drawn} of {whole} vertices");
    // The timeline's legend: the ten callbacks with the most time, unknown runs, flows.
    let at = dom.find("data-legend=\"timeline\"").expect("a legend under the timeline");
    let legend = &dom[at..at + dom[at..].find("</div>").unwrap()];
    assert_eq!(legend.matches("<span><i").count(), 12, "{legend}");
    assert!(legend.contains("a run of no known callback") && legend.contains("message flow"), "{legend}");
}

#[path = "../../analysis/tests/support/system.rs"]
mod system;

/// A system larger than a page's tables: each table is cut to the rows that weigh most, and the
/// page says how many the analysis has (the overview's figures are the analysis's).
#[test]
fn report_of_a_huge_system_holds_the_heaviest_rows_and_says_so() {
    let dir = TempDir::new("report-huge");
    let trace = dir.join("trace");
    let mut s = system::Sys::new();
    let nodes = rostrace_html::ROWS + 500;
    for i in 0..nodes {
        let n = s.node(&format!("n{i}"));
        let cb = s.timer(n, 100 * system::MS);
        // Node i's callback runs for i µs: the heaviest are the last ones.
        s.run(
            1000,
            cb,
            10 * system::MS + i as u64 * 10_000,
            10 * system::MS + i as u64 * 10_000 + 1000 * (i as u64 + 1),
        );
    }
    s.write(&trace);
    let html_file = dir.join("report.html");
    let out = rostrace().arg("report").arg(&trace).arg("-o").arg(&html_file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&html_file).unwrap();
    let json = &page[page.find("id=\"data\">").unwrap() + 10..];
    let data: Value = serde_json::from_str(&json[..json.find("</script>").unwrap()]).unwrap();
    let callbacks = data["report"]["callbacks"].as_array().unwrap();
    assert_eq!(callbacks.len(), rostrace_html::ROWS);
    assert_eq!(data["report"]["nodes"].as_array().unwrap().len(), rostrace_html::ROWS);
    let lightest = callbacks.iter().map(|c| c["total_ns"].as_i64().unwrap()).min().unwrap();
    assert_eq!(lightest, 1000 * (nodes - rostrace_html::ROWS + 1) as i64, "the heaviest callbacks are kept");
    let capped: Vec<(String, u64)> = data["capped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["table"].as_str().unwrap().to_string(), c["total"].as_u64().unwrap()))
        .collect();
    // The runs in the page are those of the callbacks in it.
    assert_eq!(data["inst"]["run_s"].as_array().unwrap().len(), rostrace_html::ROWS);
    assert_eq!(data["inst"]["runs_left_out"].as_u64(), Some((nodes - rostrace_html::ROWS) as u64));
    assert!(
        capped.contains(&("callbacks".into(), nodes as u64)) && capped.contains(&("nodes".into(), nodes as u64)),
        "{capped:?}"
    );
    if !require(have_chromium(), "chromium") {
        return;
    }
    let dom = chromium_dom(&html_file);
    assert_eq!(attr(&dom, "data-key=\"nodes\"", "data-value"), Some(nodes.to_string()));
    assert_eq!(attr(&dom, "data-key=\"callbacks\"", "data-value"), Some(nodes.to_string()));
    let note = &dom[dom.find("data-capped=").expect("the page says it is cut")..];
    let thousands = |n: usize| {
        let d = n.to_string();
        let mut out = String::new();
        for (k, c) in d.chars().enumerate() {
            if k > 0 && (d.len() - k).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let want = format!("{} of {} callbacks", thousands(rostrace_html::ROWS), thousands(nodes));
    assert!(note.contains(&want), "{want}: {}", &note[..300.min(note.len())]);
}

/// `--baseline`: the report compares the run with a baseline, here the trace's own saved run with
/// one callback's durations doubled, so that the report shows that callback halved (the one
/// significant change, first) and everything else the same.
#[rostrace_testkit::needs(chromium, test_data)]
#[test]
fn report_with_a_baseline_shows_the_change() {
    if !require(have_chromium(), "chromium") {
        return;
    }
    let Some(t) = rostrace_testkit::test_data_path("traces/caret-demos-e2e-jazzy") else { return };
    let dir = TempDir::new("report-baseline");
    let saved = dir.join("run.json");
    let out = rostrace().arg("analyze").arg(&t).arg("--json").arg(&saved).arg("--samples").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut v: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    let callbacks = v["diff_samples"]["callback"].as_object_mut().unwrap();
    let (name, durations) = callbacks.iter_mut().max_by_key(|(_, d)| d.as_array().unwrap().len()).unwrap();
    let name = name.clone();
    for d in durations.as_array_mut().unwrap() {
        *d = Value::from(2 * d.as_i64().unwrap());
    }
    let base = dir.join("slower.json");
    std::fs::write(&base, serde_json::to_vec(&v).unwrap()).unwrap();
    let html = dir.join("report.html");
    let out = rostrace().arg("report").arg(&t).arg("--baseline").arg(&base).arg("-o").arg(&html).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = chromium_dom(&html);
    assert!(dom.contains("data-rendered=\"ok\""), "the page rendered");
    let section = &dom[dom.find("id=\"baseline\"").expect("the baseline section")..];
    assert!(section.contains("1 significant change(s) of"), "{section:.2000}");
    let esc = name.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let first = &section[section.find("<tbody>").unwrap()..];
    let first = &first[..first.find("</tr>").unwrap()];
    for cell in ["CHANGED", "callback", esc.as_str(), "x0.50"] {
        assert!(first.contains(&format!(">{cell}</td>")), "{cell} in the first row: {first}");
    }
    // The thresholds are `diff`'s: a change of the median must be over 60 % here, so the halved
    // callback (50 %) is no longer significant.
    let mut cmd = rostrace();
    cmd.arg("report").arg(&t).arg("--baseline").arg(&base).args(["--min-change", "0.6", "-o"]).arg(&html);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = chromium_dom(&html);
    let section = &dom[dom.find("id=\"baseline\"").expect("the baseline section")..];
    assert!(
        section.contains("0 significant change(s) of") && section.contains("median changed ≥ 60%"),
        "{section:.2000}"
    );
    // A baseline that cannot be read, or a threshold out of its range: an error naming it.
    for (arg, bad) in [("--baseline", saved.with_file_name("none.json").into_os_string()), ("--alpha", "0".into())] {
        let mut cmd = rostrace();
        cmd.arg("report").arg(&t).arg("-o").arg(&html);
        if arg != "--baseline" {
            cmd.arg("--baseline").arg(&base);
        }
        let out = cmd.arg(arg).arg(bad).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&out.stderr).contains(arg), "{}", String::from_utf8_lossy(&out.stderr));
    }
}
