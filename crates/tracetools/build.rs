//! Generates, from `tracepoints.def` (the tracepoint catalog), everything that must agree with it:
//! the Rust table of tracepoints, the C ABI (`ros_trace_*`), the safe Rust API, the C header
//! `tracetools/tracetools.h`, and the LTTng-UST tracepoint provider (C), built as a shared
//! library when LTTng-UST's headers are installed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

struct Arg {
    c_type: String,
    name: String,
}

struct Field {
    name: String,
    kind: String,
    src: String,
    len: Option<String>,
}

struct Tp {
    provider: String,
    name: String,
    init: bool,
    since: String,
    args: Vec<Arg>,
    fields: Vec<Field>,
}

fn parse(text: &str) -> Vec<Tp> {
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('|').map(|c| c.trim()).collect();
        assert!(cols.len() == 5, "tracepoints.def:{}: expected 5 columns", ln + 1);
        let (provider, name) = cols[0].split_once(':').expect("provider:name");
        let args = if cols[3] == "void" {
            Vec::new()
        } else {
            cols[3]
                .split(',')
                .map(|a| {
                    let a = a.trim();
                    let i = a.rfind([' ', '*']).expect("C declaration");
                    Arg { c_type: a[..=i].trim().to_string(), name: a[i + 1..].trim().to_string() }
                })
                .collect()
        };
        let mut fields = Vec::new();
        if !cols[4].is_empty() {
            // Split on commas outside parentheses.
            let mut depth = 0;
            let mut cur = String::new();
            let mut parts = Vec::new();
            for ch in cols[4].chars() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(std::mem::take(&mut cur));
                        continue;
                    }
                    _ => {}
                }
                cur.push(ch);
            }
            parts.push(cur);
            for p in parts {
                let (fname, rest) = p.trim().split_once('=').expect("name=kind(src)");
                let (kind, inner) = rest.trim_end_matches(')').split_once('(').expect("kind(src)");
                let mut it = inner.split(',').map(|s| s.trim().to_string());
                let src = it.next().unwrap();
                let len = it.next();
                fields.push(Field { name: fname.trim().into(), kind: kind.trim().into(), src, len });
            }
        }
        for f in &fields {
            assert!(
                f.src == "@VERSION" || args.iter().any(|a| a.name == f.src),
                "tracepoints.def:{}: field {} uses unknown argument {}",
                ln + 1,
                f.name,
                f.src
            );
        }
        out.push(Tp {
            provider: provider.into(),
            name: name.into(),
            init: cols[1] == "init",
            since: cols[2].into(),
            args,
            fields,
        });
    }
    out
}

#[allow(dead_code)]
mod abis {
    include!("src/abis.rs");
}
use abis::{message_only_event, Abi, ABIS};

fn rust_ffi_type(c: &str) -> &'static str {
    match c {
        "const void *" => "*const c_void",
        "const char *" => "*const c_char",
        "int64_t" | "const int64_t" => "i64",
        "const bool" => "bool",
        "const size_t" => "usize",
        "const uint64_t" => "u64",
        "const uint8_t *" => "*const u8",
        "const void **" => "*const *const c_void",
        other => panic!("unsupported C type {other}"),
    }
}

/// The Rust API type of an argument (pointers as addresses, strings as bytes).
fn rust_api_type(c: &str) -> &'static str {
    match c {
        "const void *" => "usize",
        "const char *" => "&[u8]",
        "int64_t" | "const int64_t" => "i64",
        "const bool" => "bool",
        "const size_t" => "usize",
        "const uint64_t" => "u64",
        "const uint8_t *" => "&[u8]",
        "const void **" => "&[usize]",
        other => panic!("unsupported C type {other}"),
    }
}

fn field_type_rs(kind: &str) -> &'static str {
    match kind {
        "ptr" => "FieldType::Pointer",
        "i64" => "FieldType::I64",
        "u64" => "FieldType::U64",
        "bool" => "FieldType::I32",
        "str" => "FieldType::String",
        "gid" => "FieldType::U8Array(GID_SIZE as u32)",
        "seq" => "FieldType::PointerSequence",
        k => panic!("unknown field kind {k}"),
    }
}

fn ident(tp: &Tp) -> String {
    if tp.provider == "ros2" {
        tp.name.clone()
    } else {
        format!("{}_{}", tp.provider, tp.name)
    }
}

fn gen_catalog(tps: &[Tp]) -> String {
    let mut s = String::new();
    s.push_str("/// Every tracepoint, in catalog order; an event's id in written traces is its index.\npub static TRACEPOINTS: &[Tracepoint] = &[\n");
    for tp in tps {
        let _ = writeln!(
            s,
            "    Tracepoint {{ provider: {:?}, name: {:?}, init: {}, since: {:?}, args: &[{}], fields: &[{}] }},",
            tp.provider,
            tp.name,
            tp.init,
            tp.since,
            tp.args.iter().map(|a| format!("({:?}, {:?})", a.c_type, a.name)).collect::<Vec<_>>().join(", "),
            tp.fields
                .iter()
                .map(|f| format!("({:?}, {})", f.name, field_type_rs(&f.kind)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    s.push_str("];\n\n/// Event ids, by tracepoint.\n#[allow(non_upper_case_globals, missing_docs)]\npub mod id {\n");
    for (i, tp) in tps.iter().enumerate() {
        let _ = writeln!(s, "    pub const {}: u16 = {i};", ident(tp));
    }
    s.push_str("}\n");
    s
}

/// Rust expression converting a Rust API argument to the C type the LTTng provider takes.
fn api_to_c(a: &Arg, pre: &mut String) -> String {
    match a.c_type.as_str() {
        "const void *" => format!("{} as *const c_void", a.name),
        "const char *" => {
            let _ = write!(pre, "\n            let {n}_c = crate::ffi::to_cstring({n});", n = a.name);
            format!("{}_c.as_ptr()", a.name)
        }
        "const uint8_t *" => {
            let _ = write!(pre, "\n            let {n}_c = crate::ffi::gid_array({n});", n = a.name);
            format!("{}_c.as_ptr()", a.name)
        }
        "const void **" => format!("{}.as_ptr() as *const *const c_void", a.name),
        _ => a.name.clone(),
    }
}

/// The Rust API function of a tracepoint: the embedded tracer encodes the payload, the LTTng
/// backend calls the provider.
fn gen_emit(tp: &Tp) -> String {
    let id = ident(tp);
    let lens: Vec<(&String, &String)> = tp.fields.iter().filter_map(|f| f.len.as_ref().map(|l| (&f.src, l))).collect();
    let params: Vec<String> = tp
        .args
        .iter()
        .filter(|a| !lens.iter().any(|(_, l)| *l == &a.name))
        .map(|a| format!("{}: {}", a.name, rust_api_type(&a.c_type)))
        .collect();
    let mut body = String::new();
    for f in &tp.fields {
        let line = match f.kind.as_str() {
            "ptr" => format!("e.u64({} as u64);", f.src),
            "i64" => format!("e.i64({});", f.src),
            "u64" => format!("e.u64({} as u64);", f.src),
            "bool" => format!("e.i32({} as i32);", f.src),
            "str" if f.src == "@VERSION" => "e.string(crate::distro::current().version.as_bytes());".to_string(),
            "str" => format!("e.string({});", f.src),
            "gid" => format!("e.u8_array({}, crate::distro::current().gid_size);", f.src),
            "seq" => format!("e.pointer_sequence({});", f.src),
            k => panic!("{k}"),
        };
        let _ = write!(body, "\n                {line}");
    }
    if message_only_event(&tp.provider, &tp.name) {
        // Humble and Iron record the message only.
        body = format!(
            "\n                if crate::distro::current().rmw_publish_message_only() {{\n                    e.u64(message as u64);\n                }} else {{{}\n                }}",
            body.replace("\n                ", "\n                    ")
        );
    }
    // Runtime events about a callback, a publisher or a subscription obey node/topic filters.
    let key = if tp.init {
        None
    } else {
        ["callback", "publisher_handle", "rmw_publisher_handle", "rmw_subscription_handle"]
            .into_iter()
            .find(|k| tp.args.iter().any(|a| a.name == *k))
    };
    let filter = key
        .map(|k| format!("\n            if !crate::filter::allows({k}) {{\n                return;\n            }}"))
        .unwrap_or_default();
    let mut pre = String::new();
    let cargs: Vec<String> = tp
        .args
        .iter()
        .map(|a| match lens.iter().find(|(_, l)| *l == &a.name) {
            Some((arr, _)) => format!("{arr}.len()"),
            None => api_to_c(a, &mut pre),
        })
        .collect();
    format!(
        "/// Records `{p}:{n}` (since {since}).\n#[inline]\n#[allow(clippy::too_many_arguments, unused_variables, clippy::unnecessary_cast)]\npub fn {id}({params}) {{\n    match crate::tracer::mode() {{\n        Mode::Embedded => embedded_{id}({names}),\n        Mode::Lttng => {{{pre}\n            // SAFETY: the provider's function for the event, of the C signature it was loaded with\n            // (`lttng::load_table`); the pointers are addresses the probe records as integers, or\n            // point into buffers made above, alive through the call.\n            crate::lttng::with(|t| unsafe {{ (t.{p}_{n})({cargs}) }});\n        }}\n        Mode::Off => {{}}\n    }}\n}}\n\n\
/// `{p}:{n}` to the embedded tracer (the mode is known to be embedded).\n#[inline]\n#[allow(clippy::too_many_arguments, unused_variables, clippy::unnecessary_cast)]\npub(crate) fn embedded_{id}({params}) {{{filter}\n    if crate::tracer::wanted(id::{id}) {{\n        crate::tracer::emit(id::{id}, |e| {{{body}\n        }});\n    }}\n}}\n\n",
        names = tp.args.iter().filter(|a| !lens.iter().any(|(_, l)| *l == &a.name)).map(|a| a.name.clone()).collect::<Vec<_>>().join(", "),
        p = tp.provider,
        n = tp.name,
        since = tp.since,
        params = params.join(", "),
        cargs = cargs.join(", ")
    )
}

/// `ros_trace_X`, `ros_trace_enabled_X`, `ros_trace_do_X` for a `ros2` tracepoint.
fn gen_abi(tp: &Tp) -> String {
    let id = ident(tp);
    let params: Vec<String> = tp.args.iter().map(|a| format!("{}: {}", a.name, rust_ffi_type(&a.c_type))).collect();
    let lens: Vec<(&String, &String)> = tp.fields.iter().filter_map(|f| f.len.as_ref().map(|l| (&f.src, l))).collect();
    let mut conv = String::new();
    let mut call = Vec::new();
    for a in &tp.args {
        if lens.iter().any(|(_, l)| *l == &a.name) {
            continue;
        }
        let expr = match a.c_type.as_str() {
            "const void *" => format!("{} as usize", a.name),
            "const char *" => format!("crate::ffi::c_str({})", a.name),
            "const uint8_t *" => format!("crate::ffi::gid({})", a.name),
            "const void **" => {
                let len = lens.iter().find(|(s, _)| *s == &a.name).map(|(_, l)| l.as_str()).expect("length");
                let _ = write!(conv, "\n            let {n}_v = crate::ffi::pointers({n}, {len});", n = a.name);
                format!("{}_v", a.name)
            }
            _ => a.name.clone(),
        };
        call.push(expr);
    }
    let p = params.join(", ");
    let names = tp.args.iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(", ");
    let call_exprs: Vec<String> =
        call.iter().map(|c| if c.ends_with("_v") { format!("&{c}") } else { c.clone() }).collect();
    let remap = message_only_remap(tp);
    // CARET's hooks that ride on tracetools' own calls: the DDS write after an `rcl_publish`
    // follows its filter decision; `rcl_init` brings CARET's once-per-process events.
    let before = if tp.name == "rcl_publish" {
        "\n    crate::ffi::guard(|| crate::hooks::note_rcl_publish(publisher_handle as usize));"
    } else {
        ""
    };
    let after = if tp.name == "rcl_init" { "\n    crate::ffi::guard(crate::hooks::process_init);" } else { "" };
    format!(
        "/// `ros_trace_{id}`: records `ros2:{id}` if tracing is on.\n#[no_mangle]\n#[allow(clippy::too_many_arguments)]\npub unsafe extern \"C\" fn ros_trace_{id}({p}) {{\n    if crate::tracer::is_off() {{\n        return;\n    }}{before}\n    record_{id}({names});{after}\n}}\n\n#[inline(never)]\n#[allow(clippy::too_many_arguments)]\nunsafe fn record_{id}({p}) {{{remap}\n    crate::ffi::guard(|| match crate::tracer::mode() {{\n        Mode::Lttng => {{
            crate::lttng::with(|t| (t.ros2_{id})({names}));
        }}\n        Mode::Embedded => {{{conv}\n            crate::api::embedded_{id}({});\n        }}\n        Mode::Off => {{}}\n    }});\n}}\n\n\
/// `ros_trace_enabled_{id}`: whether `ros2:{id}` would be recorded.\n#[no_mangle]\npub extern \"C\" fn ros_trace_enabled_{id}() -> bool {{\n    if crate::tracer::is_off() {{\n        return false;\n    }}\n    crate::ffi::guard_or(false, || match crate::tracer::mode() {{\n        // SAFETY: the provider's check of the event, of the C signature it was loaded with; no argument.\n        Mode::Lttng => crate::lttng::with(|t| unsafe {{ (t.enabled_ros2_{id})() }} != 0).unwrap_or(false),\n        Mode::Embedded => crate::tracer::event_on(crate::catalog::id::{id}),\n        Mode::Off => false,\n    }})\n}}\n\n\
/// `ros_trace_do_{id}`: records `ros2:{id}`.\n#[no_mangle]\n#[allow(clippy::too_many_arguments)]\npub unsafe extern \"C\" fn ros_trace_do_{id}({p}) {{\n    ros_trace_{id}({names});\n}}\n\n",
        call_exprs.join(", "),
        before = before,
        after = after,
    )
}

/// For the events whose Humble and Iron callers pass only the message (`rmw_publish`, CARET's
/// `dds_write`): the arguments put back in place on those distributions (the first argument is
/// the message, the other registers hold nothing of theirs).
fn message_only_remap(tp: &Tp) -> &'static str {
    if message_only_event(&tp.provider, &tp.name) {
        "\n    let (rmw_publisher_handle, message, timestamp) = if crate::distro::current().rmw_publish_message_only() {\n        (std::ptr::null(), rmw_publisher_handle, 0)\n    } else {\n        (rmw_publisher_handle, message, timestamp)\n    };"
    } else {
        ""
    }
}

/// `ros_trace_caret_X` and `ros_trace_enabled_caret_X` for a `ros2_caret` tracepoint: CARET's
/// events for C and C++ code (CARET calls LTTng's `tracepoint(ros2_caret, X, ...)` directly).
fn gen_caret_abi(tp: &Tp) -> String {
    let id = ident(tp);
    let params: Vec<String> = tp.args.iter().map(|a| format!("{}: {}", a.name, rust_ffi_type(&a.c_type))).collect();
    let call: Vec<String> = tp
        .args
        .iter()
        .map(|a| match a.c_type.as_str() {
            "const void *" => format!("{} as usize", a.name),
            "const char *" => format!("crate::ffi::c_str({})", a.name),
            _ => a.name.clone(),
        })
        .collect();
    let remap = message_only_remap(tp);
    format!(
        "/// `ros_trace_caret_{n}`: records `ros2_caret:{n}` if tracing is on.\n#[no_mangle]\n#[allow(clippy::too_many_arguments)]\npub unsafe extern \"C\" fn ros_trace_caret_{n}({p}) {{\n    if crate::tracer::is_off() {{\n        return;\n    }}{remap}\n    crate::ffi::guard(|| crate::api::{id}({call}));\n}}\n\n\
/// `ros_trace_enabled_caret_{n}`: whether `ros2_caret:{n}` would be recorded.\n#[no_mangle]\npub extern \"C\" fn ros_trace_enabled_caret_{n}() -> bool {{\n    if crate::tracer::is_off() {{\n        return false;\n    }}\n    crate::ffi::guard_or(false, || match crate::tracer::mode() {{\n        // SAFETY: the provider's check of the event, of the C signature it was loaded with; no argument.\n        Mode::Lttng => crate::lttng::with(|t| unsafe {{ (t.enabled_{id})() }} != 0).unwrap_or(false),\n        Mode::Embedded => crate::tracer::event_on(crate::catalog::id::{id}),\n        Mode::Off => false,\n    }})\n}}\n\n",
        n = tp.name,
        p = params.join(", "),
        call = call.join(", "),
    )
}

/// A generated C header: `about` (comment lines after the generated-by line), its include
/// guard `guard`, the integer and bool includes, `defs`, then `decls` in an `extern "C"` block.
fn c_header(about: &str, guard: &str, defs: &str, decls: &str) -> String {
    format!(
        "// Generated by rostrace from its tracepoint catalog (crates/tracetools/tracepoints.def).\n\
{about}#ifndef {guard}\n#define {guard}\n\n\
#include <stdbool.h>\n#include <stdint.h>\n#include <stddef.h>\n\n\
{defs}#ifdef __cplusplus\nextern \"C\"\n{{\n#endif\n\n\
{decls}#ifdef __cplusplus\n}}\n#endif\n\n#endif  // {guard}\n"
    )
}

/// The declarations of `provider`'s events (`/// \`provider:name\` (init{sep}since).` and
/// `decl(name, args)`), with `args` the C parameter list as `args` writes it.
fn c_decls(
    tps: &[Tp],
    provider: &str,
    sep: &str,
    args: impl Fn(&Tp) -> String,
    decl: impl Fn(&str, &str) -> String,
) -> String {
    let mut s = String::new();
    for tp in tps.iter().filter(|t| t.provider == provider) {
        let a = if tp.args.is_empty() { "void".to_string() } else { args(tp) };
        let _ = write!(
            s,
            "/// `{provider}:{n}` ({init}{sep}{since}).\n{decl}\n",
            n = tp.name,
            init = if tp.init { "initialization" } else { "runtime" },
            since = tp.since,
            decl = decl(&tp.name, &a),
        );
    }
    s
}

/// `tracetools/caret.h`: the C ABI of CARET's events.
fn gen_caret_header(tps: &[Tp]) -> String {
    let decls = c_decls(
        tps,
        "ros2_caret",
        "; ",
        |tp| tp.args.iter().map(|a| format!("{} {}", a.c_type, a.name)).collect::<Vec<_>>().join(", "),
        |n, a| format!("void ros_trace_caret_{n}({a});\nbool ros_trace_enabled_caret_{n}(void);\n"),
    );
    c_header(
        "// CARET's `ros2_caret` events (tier4/caret_trace, tp.h) as functions of rostrace's libtracetools:\n\
// ros_trace_caret_<event>(args) records ros2_caret:<event> with the process's backend.\n",
        "TRACETOOLS__CARET_H_",
        "",
        &decls,
    )
}

/// The C++ part of the rclcpp hooks (`src/hooks/shared_get.cpp`), as a static library linked
/// into this crate. It uses `std::shared_ptr` only (header code: no libstdc++ symbol is needed).
fn build_hooks_cpp(manifest: &Path, out: &Path) {
    let src = manifest.join("src/hooks/shared_get.cpp");
    println!("cargo:rerun-if-changed={}", src.display());
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let obj = out.join("shared_get.o");
    let st = std::process::Command::new(&cxx)
        .args(["-c", "-fPIC", "-O2", "-fno-exceptions", "-fno-rtti", "-std=c++14", "-Wall", "-Werror"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .status()
        .unwrap_or_else(|e| panic!("running the C++ compiler {cxx}: {e} (install g++)"));
    assert!(st.success(), "compiling {} failed", src.display());
    let ar = std::env::var("AR").unwrap_or_else(|_| "ar".into());
    let lib = out.join("librostrace_hooks.a");
    let _ = std::fs::remove_file(&lib);
    let st = std::process::Command::new(&ar).arg("crs").arg(&lib).arg(&obj).status().expect("ar");
    assert!(st.success(), "ar failed");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=rostrace_hooks");
}

/// The table of the LTTng provider's functions, looked up with `dlsym`.
fn gen_lttng_table(tps: &[Tp]) -> String {
    let mut def = String::from("/// Functions of the LTTng-UST provider library.\n#[allow(missing_docs, non_snake_case, dead_code)]\npub struct Table {\n");
    let mut load = String::from("/// Looks every function up in `h`.\n///\n/// # Safety\n/// `h` is a handle from `dlopen` of the provider library.\npub unsafe fn load_table(h: *mut c_void) -> Option<Table> {\n    Some(Table {\n");
    for tp in tps {
        let ffi: Vec<&str> = tp.args.iter().map(|a| rust_ffi_type(&a.c_type)).collect();
        let f = format!("{}_{}", tp.provider, tp.name);
        let _ = writeln!(def, "    pub {f}: unsafe extern \"C\" fn({}),", ffi.join(", "));
        let _ = writeln!(def, "    pub enabled_{f}: unsafe extern \"C\" fn() -> c_int,");
        let _ = writeln!(load, "        {f}: std::mem::transmute::<*mut c_void, unsafe extern \"C\" fn({})>(sym(h, c\"rostrace_lttng_{f}\")?),", ffi.join(", "));
        let _ = writeln!(load, "        enabled_{f}: std::mem::transmute::<*mut c_void, unsafe extern \"C\" fn() -> c_int>(sym(h, c\"rostrace_lttng_enabled_{f}\")?),");
    }
    def.push_str("}\n\n");
    load.push_str("    })\n}\n");
    def + &load
}

/// `tracetools/tracetools.h`: the drop-in for upstream's header.
fn gen_header(tps: &[Tp]) -> String {
    let defs = "#define TRACETOOLS_GID_STORAGE_SIZE 16u\n\n\
#ifndef TRACETOOLS_DISABLED\n\
/* Zero once the library knows tracing is off in this process: the macros then skip the call. */\n\
#ifdef __cplusplus\n\
extern \"C\" volatile unsigned char ros_trace_maybe_active;\n\
#else\n\
extern volatile unsigned char ros_trace_maybe_active;\n\
#endif\n\
#  define TRACETOOLS_TRACEPOINT(event_name, ...) \\\n\
  (ros_trace_maybe_active ? (ros_trace_ ## event_name)(__VA_ARGS__) : (void) 0)\n\
#  define TRACETOOLS_TRACEPOINT_ENABLED(event_name) \\\n\
  (ros_trace_maybe_active && ros_trace_enabled_ ## event_name())\n\
#  define TRACETOOLS_DO_TRACEPOINT(event_name, ...) (ros_trace_do_ ## event_name)(__VA_ARGS__)\n\
#else\n\
#  define TRACETOOLS_TRACEPOINT(event_name, ...) ((void) (0))\n\
#  define TRACETOOLS_TRACEPOINT_ENABLED(event_name) false\n\
#  define TRACETOOLS_DO_TRACEPOINT(event_name, ...) ((void) (0))\n\
#endif\n\n";
    // Upstream's spacing: `const void * name`, `const char * name`.
    let args = |tp: &Tp| {
        let args = tp
            .args
            .iter()
            .map(|a| format!("{} {}", a.c_type, a.name).replace("* ", "*"))
            .collect::<Vec<_>>()
            .join(", ");
        let args = args
            .replace("void *", "void * ")
            .replace("char *", "char * ")
            .replace("uint8_t *", "uint8_t * ")
            .replace("void **", "void ** ");
        args.replace("  ", " ")
    };
    let decls = String::from(
        "/// Whether tracing support was compiled in.\nbool ros_trace_compile_status(void);\n\
/// Whether a tracing backend is active at run time.\nbool ros_trace_runtime_status(void);\n\n",
    ) + &c_decls(tps, "ros2", ", since ", args, |n, a| {
        format!("void ros_trace_{n}({a});\nbool ros_trace_enabled_{n}(void);\nvoid ros_trace_do_{n}({a});\n")
    });
    c_header(
        "// Drop-in for ros2_tracing's tracetools/tracetools.h: same functions, same macros.\n",
        "TRACETOOLS__TRACETOOLS_H_",
        defs,
        &decls,
    )
}

/// The LTTng-UST provider: `TRACEPOINT_EVENT`s with upstream's fields, and one exported
/// emitting function per tracepoint, called by libtracetools when the LTTng backend is on.
fn gen_lttng(tps: &[Tp], provider: &str, abi: &Abi) -> (String, String) {
    let mut h = format!(
        "// Generated by rostrace from its tracepoint catalog.\n#undef TRACEPOINT_PROVIDER\n#define TRACEPOINT_PROVIDER {provider}\n\n\
#undef TRACEPOINT_INCLUDE\n#define TRACEPOINT_INCLUDE \"./tp_{provider}.h\"\n\n\
#if !defined(_TP_{up}_H) || defined(TRACEPOINT_HEADER_MULTI_READ)\n#define _TP_{up}_H\n\n#include <lttng/tracepoint.h>\n#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n\n",
        up = provider.to_uppercase()
    );
    let mut c = format!(
        "// Generated by rostrace from its tracepoint catalog.\n#define TRACEPOINT_CREATE_PROBES\n#define TRACEPOINT_DEFINE\n#include \"tp_{provider}.h\"\n\nstatic const uint8_t rostrace_zero_gid[24];\n\n"
    );
    for tp in tps.iter().filter(|t| t.provider == provider) {
        let present = abi.has_since(&tp.provider, &tp.since);
        let message_only = message_only_event(&tp.provider, &tp.name) && abi.rmw_publish_message_only();
        let tp_arg_list: Vec<&Arg> = tp.args.iter().filter(|a| !message_only || a.name == "message").collect();
        let args: Vec<String> = tp_arg_list
            .iter()
            .map(|a| format!("{}, {}_arg", a.c_type.replace(" *", "*").replace(" **", "**"), a.name))
            .collect();
        let tp_args = if args.is_empty() { "TP_ARGS()".to_string() } else { format!("TP_ARGS({})", args.join(", ")) };
        let mut fields = Vec::new();
        for f in tp.fields.iter().filter(|f| !message_only || f.name == "message") {
            let src = format!("{}_arg", f.src);
            fields.push(match f.kind.as_str() {
                "ptr" => format!("ctf_integer_hex(const void *, {}, {})", f.name, src),
                "i64" => format!("ctf_integer(int64_t, {}, {})", f.name, src),
                "u64" => format!("ctf_integer(uint64_t, {}, {})", f.name, src),
                "bool" => format!("ctf_integer(int, {}, ({} ? 1 : 0))", f.name, src),
                "str" if f.src == "@VERSION" => format!("ctf_string({}, ROSTRACE_VERSION)", f.name),
                "str" => format!("ctf_string({}, {})", f.name, src),
                "gid" => format!("ctf_array(uint8_t, {}, {}, {})", f.name, src, abi.gid_size),
                "seq" => format!(
                    "ctf_sequence_hex(const void *, {}, {}, size_t, {}_arg)",
                    f.name,
                    src,
                    f.len.as_ref().unwrap()
                ),
                k => panic!("{k}"),
            });
        }
        if present {
            let _ = write!(
                h,
                "TRACEPOINT_EVENT(\n  {provider},\n  {},\n  {tp_args},\n  TP_FIELDS(\n    {}\n  )\n)\n\n",
                tp.name,
                fields.join("\n    ")
            );
        }
        // Value parameters without top-level const, so that null pointers can be replaced.
        let cargs: Vec<String> = tp
            .args
            .iter()
            .map(|a| {
                let t = if a.c_type.contains('*') { a.c_type.as_str() } else { a.c_type.trim_start_matches("const ") };
                format!("{t} {}_arg", a.name)
            })
            .collect();
        let cargs = if cargs.is_empty() { "void".to_string() } else { cargs.join(", ") };
        let names: Vec<String> = tp_arg_list.iter().map(|a| format!(", {}_arg", a.name)).collect();
        // Null pointers are recorded safely: "(null)" strings, zero GIDs, empty sequences.
        let mut safe = String::new();
        for a in &tp.args {
            match a.c_type.as_str() {
                "const char *" => {
                    let _ = write!(safe, " if (!{n}_arg) {n}_arg = \"(null)\";", n = a.name);
                }
                "const uint8_t *" => {
                    let _ = write!(safe, " if (!{n}_arg) {n}_arg = rostrace_zero_gid;", n = a.name);
                }
                "const void **" => {
                    if let Some(f) = tp.fields.iter().find(|f| f.src == a.name) {
                        let _ = write!(safe, " if (!{n}_arg) {l}_arg = 0;", n = a.name, l = f.len.as_ref().unwrap());
                    }
                }
                _ => {}
            }
        }
        if present {
            let _ = write!(
                c,
                "void rostrace_lttng_{provider}_{n}({cargs}) {{{safe} tracepoint({provider}, {n}{}); }}\nint rostrace_lttng_enabled_{provider}_{n}(void) {{ return tracepoint_enabled({provider}, {n}); }}\n\n",
                names.join(""),
                n = tp.name
            );
        } else {
            // Not in this distribution: nothing is recorded.
            let _ = write!(
                c,
                "void rostrace_lttng_{provider}_{n}({cargs}) {{ }}\nint rostrace_lttng_enabled_{provider}_{n}(void) {{ return 0; }}\n\n",
                n = tp.name
            );
        }
    }
    let _ = write!(h, "#endif\n\n#include <lttng/tracepoint-event.h>\n");
    (h, c)
}

/// The ros2_tracing version this library mirrors, recorded by `rcl_init` by every backend.
const TRACETOOLS_VERSION: &str = "8.10.1";

fn main() {
    println!("cargo:rustc-env=ROSTRACE_TRACETOOLS_VERSION={TRACETOOLS_VERSION}");
    // Upstream's SONAME: a preloaded rostrace library satisfies a program's or rcl's
    // `NEEDED libtracetools.so`, and a program linked to it by path records that name.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtracetools.so");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=tracepoints.def");
    println!("cargo:rerun-if-changed=src/abis.rs");
    let tps = parse(&std::fs::read_to_string(manifest.join("tracepoints.def")).expect("tracepoints.def"));
    assert_eq!(
        tps.iter().filter(|t| t.provider == "ros2").count(),
        42,
        "the 42 ros2 tracepoints of ros2_tracing 8.10.1"
    );
    std::fs::write(out.join("catalog_gen.rs"), gen_catalog(&tps)).unwrap();
    let api: String = tps.iter().map(gen_emit).collect();
    std::fs::write(out.join("api_gen.rs"), api).unwrap();
    let abi: String = tps.iter().filter(|t| t.provider == "ros2").map(gen_abi).collect();
    std::fs::write(out.join("abi_gen.rs"), abi).unwrap();
    let caret_abi: String = tps.iter().filter(|t| t.provider == "ros2_caret").map(gen_caret_abi).collect();
    std::fs::write(out.join("caret_abi_gen.rs"), caret_abi).unwrap();
    build_hooks_cpp(&manifest, &out);
    std::fs::write(out.join("lttng_gen.rs"), gen_lttng_table(&tps)).unwrap();
    let inc = out.join("include/tracetools");
    std::fs::create_dir_all(&inc).unwrap();
    let header = gen_header(&tps);
    std::fs::write(inc.join("tracetools.h"), &header).unwrap();
    let caret_header = gen_caret_header(&tps);
    std::fs::write(inc.join("caret.h"), &caret_header).unwrap();
    // Beside the built library too: target/<profile>/include/tracetools/tracetools.h.
    if let Some(profile_dir) = out.ancestors().nth(3) {
        let d = profile_dir.join("include/tracetools");
        if std::fs::create_dir_all(&d).is_ok() {
            let _ = std::fs::write(d.join("tracetools.h"), &header);
            let _ = std::fs::write(d.join("caret.h"), &caret_header);
        }
    }
    println!("cargo:rustc-env=ROSTRACE_INCLUDE_DIR={}", out.join("include").display());
    build_lttng_provider(&tps, &out);
}

/// Builds `librostrace_lttng_<distro>.so` (both providers, with that distribution's `ros2`
/// events and layout) for every ABI, when LTTng-UST's headers and a C compiler are there.
fn build_lttng_provider(tps: &[Tp], out: &Path) {
    let root = out.join("lttng");
    let headers = [
        "/usr/include/lttng/tracepoint.h",
        "/usr/include/x86_64-linux-gnu/lttng/tracepoint.h",
        "/usr/include/aarch64-linux-gnu/lttng/tracepoint.h",
    ];
    let have_ust = headers.iter().any(|h| Path::new(h).exists());
    if !have_ust {
        println!("cargo:warning=LTTng-UST headers not found (liblttng-ust-dev): the LTTng backend is unavailable");
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    for abi in &ABIS {
        let dir = root.join(abi.name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut sources = Vec::new();
        for provider in ["ros2", "ros2_caret"] {
            let (h, c) = gen_lttng(tps, provider, abi);
            std::fs::write(dir.join(format!("tp_{provider}.h")), h).unwrap();
            let cpath = dir.join(format!("tp_{provider}.c"));
            std::fs::write(&cpath, c).unwrap();
            sources.push(cpath);
        }
        let lib = root.join(format!("librostrace_lttng_{}.so", abi.name));
        let _ = std::fs::remove_file(&lib);
        if !have_ust {
            continue;
        }
        let mut cmd = std::process::Command::new(&cc);
        cmd.args(["-shared", "-fPIC", "-O2", "-w"])
            .arg(format!("-DROSTRACE_VERSION=\"{}\"", abi.version))
            .arg("-I")
            .arg(&dir)
            .args(&sources)
            .arg("-o")
            .arg(&lib)
            .args(["-llttng-ust", "-ldl"]);
        match cmd.status() {
            Ok(s) if s.success() => {
                // Beside libtracetools.so (target/<profile>), where the library looks for it.
                if let Some(profile_dir) = out.ancestors().nth(3) {
                    let _ = std::fs::copy(&lib, profile_dir.join(lib.file_name().unwrap()));
                }
            }
            Ok(s) => {
                println!(
                    "cargo:warning=building the LTTng-UST provider failed ({s}): the LTTng backend is unavailable"
                );
                break;
            }
            Err(e) => {
                println!("cargo:warning=cannot run the C compiler {cc} ({e}): the LTTng backend is unavailable");
                break;
            }
        }
    }
    println!("cargo:rustc-env=ROSTRACE_LTTNG_PROVIDER_DIR={}", root.display());
    // For the build scripts of the programs that embed the providers (DEP_TRACETOOLS_LTTNG_DIR).
    println!("cargo:lttng_dir={}", root.display());
    for h in headers {
        if Path::new(h).exists() {
            println!("cargo:rerun-if-changed={h}");
        }
    }
}
