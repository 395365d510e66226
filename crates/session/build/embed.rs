// Build-time half of embedding rostrace's `libtracetools.so` and its LTTng-UST providers in a
// program (the `rostrace` binary, the Python package's native module), `include!`d by their
// build scripts: an installed program (`cargo install` copies binaries only; a wheel carries
// its module) can still preload them into the programs it records. The library is the `cdylib`
// that cargo builds beside the `rlib` of rostrace-tracetools (a dependency of the program, so
// built before the program is compiled, though after this script runs: the generated code names
// its path for `include_bytes!`); the providers come from rostrace-tracetools' build script,
// whose directory its `links` metadata passes here. The run-time half is
// `rostrace_session::embedded`.

/// Writes `providers.rs` into OUT_DIR: the library and the providers for `include_bytes!`.
pub fn embed_tracer() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-env-changed=ROSTRACE_NO_EMBED");
    // OUT_DIR is target/<profile>/build/<pkg>-<hash>/out; the dependencies' outputs are in
    // target/<profile>/deps.
    let lib = out.ancestors().nth(3).expect("OUT_DIR is target/<profile>/build/<pkg>/out").join("deps/libtracetools.so");
    let none = out.join("none");
    std::fs::write(&none, b"").expect("OUT_DIR is writable");
    let embed = std::env::var_os("ROSTRACE_NO_EMBED").is_none();
    if embed && !lib.exists() {
        // `cargo check` and `clippy` build no libraries, and their code still includes one: an
        // empty file stands for "not embedded" until rustc links the library over it (it
        // replaces the file; a library already there is never touched).
        let _ = std::fs::OpenOptions::new().write(true).create_new(true).open(&lib);
    }
    let mut providers: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("DEP_TRACETOOLS_LTTNG_DIR").filter(|_| embed) {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("librostrace_lttng_") && name.ends_with(".so") {
                providers.push(e.path());
            }
        }
    }
    providers.sort();
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
    std::fs::write(
        out.join("providers.rs"),
        format!(
            "/// libtracetools.so (empty when not embedded).\nstatic LIBRARY: &[u8] = include_bytes!({:?});\n\
             /// The LTTng-UST providers, one per distribution: (file name, contents).\nstatic PROVIDERS: &[(&str, &[u8])] = &[\n{list}];\n",
            if embed { &lib } else { &none }.display().to_string()
        ),
    )
    .expect("OUT_DIR is writable");
}
