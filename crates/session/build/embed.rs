// Build-time half of embedding rostrace's `libtracetools.so` and its LTTng-UST providers in a
// program (the `rostrace` binary, the Python package's native module), `include!`d by their
// build scripts: an installed program (`cargo install` copies binaries only; a wheel carries
// its module) can still preload them into the programs it records. The library is a `cdylib`
// of another package of the workspace; cargo cannot hand one crate another's cdylib, so this
// builds it with the same profile into `target/embedded` (the dependencies come from the same
// lock file, offline). Without it (a failed build), the program finds the library beside itself
// or through `$ROSTRACE_LIB`. The run-time half is `rostrace_session::embedded`.

/// Builds libtracetools.so and the providers and writes `libtracetools.so` (empty when not
/// embedded) and `providers.rs` into OUT_DIR, for `include_bytes!` and `include!`. `manifest`:
/// the including package's directory; `workspace`: the workspace root from it.
pub fn embed_tracer(workspace: &Path) {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    for dir in [
        "crates/tracetools/src",
        "crates/tracetools/build.rs",
        "crates/tracetools/tracepoints.def",
        "crates/tracetools/Cargo.toml",
        "crates/ctf-write/src",
        "crates/ctf-write/Cargo.toml",
        "crates/session/build/embed.rs",
    ] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=ROSTRACE_NO_EMBED");
    let lib_out = out.join("libtracetools.so");
    let _ = std::fs::remove_file(&lib_out);
    let mut providers = Vec::new();
    if std::env::var_os("ROSTRACE_NO_EMBED").is_none() {
        match build(&out, workspace, &lib_out) {
            Ok(p) => providers = p,
            Err(e) => println!(
                "cargo:warning=libtracetools.so is not embedded ({e}): without it beside the program, recording needs ROSTRACE_LIB"
            ),
        }
    }
    // An empty file stands for "not embedded".
    if !lib_out.exists() {
        std::fs::write(&lib_out, b"").expect("OUT_DIR is writable");
    }
    let list: String = providers
        .iter()
        .map(|p| {
            format!(
                "    ({:?}, include_bytes!({:?})),\n",
                p.file_name().unwrap().to_string_lossy(),
                p.display().to_string()
            )
        })
        .collect();
    // What the files are, named once here: the installed copies go to a directory of this name.
    let mut hash = fnv(&std::fs::read(&lib_out).expect("just written"));
    for p in &providers {
        hash = hash.rotate_left(17) ^ fnv(&std::fs::read(p).expect("just copied"));
    }
    std::fs::write(
        out.join("providers.rs"),
        format!(
            "/// The LTTng-UST providers, one per distribution: (file name, contents).\nstatic PROVIDERS: &[(&str, &[u8])] = &[\n{list}];\n\
             /// A hash of the library and the providers.\nconst CONTENT_HASH: u64 = {hash:#x};\n"
        ),
    )
    .expect("OUT_DIR is writable");
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3))
}

/// Builds the library; copies it to `lib_out`, and the providers into OUT_DIR (returned).
fn build(out: &Path, workspace: &Path, lib_out: &Path) -> Result<Vec<PathBuf>, String> {
    // OUT_DIR is target/<profile>/build/<pkg>-<hash>/out: build beside target/<profile>.
    let target = out.ancestors().nth(4).ok_or("unexpected OUT_DIR")?.join("embedded");
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "release".into());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args(["build", "--offline", "--quiet", "-p", "rostrace-tracetools", "--lib", "--target-dir"])
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        // Under `cargo clippy` the lint driver wraps rustc for workspace members: the library is
        // built by rustc alone, and its build stays the one an ordinary build reuses.
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        // No debug information in the embedded copy: a tenth of the size.
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo")
        .env("CARGO_PROFILE_DEV_DEBUG", "0");
    if profile == "release" {
        cmd.arg("--release");
    }
    let st = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !st.status.success() {
        let err = String::from_utf8_lossy(&st.stderr);
        return Err(format!("cargo build -p rostrace-tracetools failed: {}", err.lines().last().unwrap_or("")));
    }
    let dir = target.join(if profile == "release" { "release" } else { "debug" });
    std::fs::copy(dir.join("libtracetools.so"), lib_out).map_err(|e| format!("libtracetools.so: {e}"))?;
    // The providers exist only where LTTng-UST's headers and a C compiler were there.
    let mut providers = Vec::new();
    for e in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("librostrace_lttng_") && name.ends_with(".so") {
            let to = out.join(&name);
            std::fs::copy(e.path(), &to).map_err(|e| format!("{name}: {e}"))?;
            providers.push(to);
        }
    }
    providers.sort();
    Ok(providers)
}
