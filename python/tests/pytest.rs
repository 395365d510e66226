//! The Python package, built and installed as a user would (`pip install ./python`, into the
//! notebook tools' virtualenv made by tools/data-venv.sh), then its pytest suite
//! (`python/tests/test_*.py`) run against the real traces and tracetools_analysis's results.

use rostrace_testkit::require;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn venv() -> PathBuf {
    std::env::var_os("ROSTRACE_VENV_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/rostrace-ci-cache/venvs"))
        .join("data")
}

/// The target directory this test was built in (`<target>/<profile>/deps/<exe>`).
fn target_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.to_path_buf())
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{what}:\n{text}");
    assert!(out.status.success(), "{what} failed ({})", out.status);
}

#[rostrace_testkit::needs(test_data, data_venv)]
#[test]
fn python_package() {
    rostrace_testkit::needs_test_data!();
    let py = venv().join("bin/python");
    if !require(py.exists(), &format!("{} (tools/data-venv.sh)", py.display())) {
        return;
    }
    let mut install = Command::new(&py);
    install
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-build-isolation", "--no-deps"])
        .args(["--force-reinstall", "--no-cache-dir"])
        .arg(repo().join("python"))
        .env("PATH", format!("{}:{}", venv().join("bin").display(), std::env::var("PATH").unwrap_or_default()));
    // A target directory of its own, beside the test's: the package's build compiles
    // `tracetools` with other features of its dependencies, and that crate (a cdylib too) has
    // file names without a hash, so in the same directory it would replace the library that
    // later steps of `cargo test` (the doctests) were compiled against.
    if let Some(t) = target_dir() {
        install.env("CARGO_TARGET_DIR", t.join("python-package"));
    }
    run(&mut install, "pip install ./python");
    let shared: &Path = &rostrace_testkit::test_data();
    let mut pytest = Command::new(&py);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"])
        .arg(repo().join("python/tests"))
        .current_dir(std::env::temp_dir())
        .env("ROSTRACE_TEST_DATA", shared)
        .env("MPLBACKEND", "Agg");
    // The CLI of the same build, which the Python results are compared with.
    if let Some(bin) = target_dir().map(|t| t.join("release/rostrace")).filter(|b| b.exists()) {
        pytest.env("ROSTRACE_BIN", bin);
    }
    run(&mut pytest, "pytest python/tests");
}
