//! Addresses to function names, from the binaries a process had mapped: LTTng-UST's statedump
//! (`lttng_ust_statedump:bin_info` and `build_id`, recorded when a process registers) and
//! `lttng_ust_dl:dlopen` (libraries loaded later, with `liblttng-ust-dl.so` preloaded) tell
//! where each binary was loaded; its ELF symbol table, read from the same path on the machine
//! that analyzes, names the function. A binary whose recorded build id differs from the file's
//! is not used (the trace came from another build); C++ names are demangled.

use crate::collections::HashMap;
use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};
use std::path::Path;

/// A binary mapped into a process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    /// Where it was loaded.
    pub baddr: u64,
    /// Bytes mapped.
    pub memsz: u64,
    /// Its path on the traced machine.
    pub path: String,
    /// Position-independent (shared library, PIE executable): addresses are relative to `baddr`.
    pub is_pic: bool,
    /// Its build id, when recorded.
    pub build_id: Option<Vec<u8>>,
}

/// The functions of one binary: (start, end, name) sorted by start, in the binary's addresses.
#[derive(Debug, Default)]
struct Binary {
    /// The first loadable segment's address (what `baddr` corresponds to).
    first_vaddr: u64,
    functions: Vec<(u64, u64, String)>,
}

impl Binary {
    fn load(path: &Path, build_id: Option<&[u8]>) -> Option<Binary> {
        let f = std::fs::File::open(path).ok()?;
        // SAFETY: read-only mapping of a file that is only read; a binary changed meanwhile
        // gives wrong names, not undefined behavior of ours beyond what any reader risks.
        let map = unsafe { memmap2::Mmap::map(&f) }.ok()?;
        let file = object::File::parse(&*map).ok()?;
        if let Some(want) = build_id {
            if file.build_id().ok().flatten() != Some(want) {
                return None;
            }
        }
        let first_vaddr = file.segments().map(|s| s.address()).min().unwrap_or(0);
        let mut functions: Vec<(u64, u64, String)> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.address() != 0)
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())))
            .filter(|(_, _, n)| !n.is_empty())
            .map(|(a, size, n)| (a, a + size, n))
            .collect();
        functions.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        functions.dedup_by_key(|f| f.0);
        // A symbol of size 0 ends where the next begins.
        for i in 0..functions.len() {
            if functions[i].1 == functions[i].0 {
                functions[i].1 = functions.get(i + 1).map_or(u64::MAX, |n| n.0);
            }
        }
        Some(Binary { first_vaddr, functions })
    }

    fn name(&self, addr: u64) -> Option<&str> {
        let k = self.functions.partition_point(|f| f.0 <= addr);
        let f = self.functions.get(k.checked_sub(1)?)?;
        (addr < f.1).then_some(f.2.as_str())
    }
}

/// Names addresses of traced processes.
#[derive(Debug, Default)]
pub struct Symbolizer {
    binaries: HashMap<(String, Option<Vec<u8>>), Option<Binary>>,
}

/// A named address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Symbol {
    /// The function (demangled), empty when not found.
    pub name: String,
    /// The binary it is in (its path on the traced machine), empty when no mapping holds it.
    pub binary: String,
}

impl Symbolizer {
    /// The function at `addr` in a process whose mappings are `maps`.
    pub fn lookup(&mut self, maps: &[Mapping], addr: u64) -> Symbol {
        // The latest mapping holding the address (a library may be loaded again elsewhere).
        let Some(m) = maps.iter().rev().find(|m| m.baddr <= addr && addr - m.baddr < m.memsz.max(1)) else {
            return Symbol::default();
        };
        let bin = self
            .binaries
            .entry((m.path.clone(), m.build_id.clone()))
            .or_insert_with(|| Binary::load(Path::new(&m.path), m.build_id.as_deref()));
        let name = bin.as_ref().and_then(|b| {
            let at = if m.is_pic { addr - m.baddr + b.first_vaddr } else { addr };
            b.name(at)
        });
        Symbol { name: name.map(demangle).unwrap_or_default(), binary: m.path.clone() }
    }
}

/// A C++ (or legacy Rust) mangled name, demangled; other names as they are.
pub fn demangle(name: &str) -> String {
    if name.starts_with("_Z") {
        if let Ok(s) = cpp_demangle::Symbol::new(name) {
            if let Ok(d) = s.demangle(&cpp_demangle::DemangleOptions::default()) {
                return d;
            }
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cpp_names() {
        assert_eq!(demangle("_ZN3foo3barEi"), "foo::bar(int)");
        assert_eq!(demangle("main"), "main");
        assert_eq!(demangle("_Znot a name"), "_Znot a name");
    }

    /// A function of this test program that the optimizer keeps as a symbol of its own (a test
    /// function itself may be inlined into the harness's closure).
    #[inline(never)]
    #[no_mangle]
    pub extern "C" fn rostrace_symbols_test_marker(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    #[test]
    fn names_addresses_of_this_test_binary() {
        // This test program, mapped by hand at a made-up base: its own function found by address.
        assert_ne!(std::hint::black_box(rostrace_symbols_test_marker as extern "C" fn(u64) -> u64)(3), 0);
        let exe = std::env::current_exe().unwrap();
        let b = Binary::load(&exe, None).expect("reads its own ELF");
        let (start, _, name) =
            b.functions.iter().find(|f| f.2 == "rostrace_symbols_test_marker").expect("the marker function's symbol");
        let maps = vec![Mapping {
            baddr: 0x5000_0000,
            memsz: 1 << 40,
            path: exe.display().to_string(),
            is_pic: true,
            build_id: None,
        }];
        let mut s = Symbolizer::default();
        let got = s.lookup(&maps, 0x5000_0000 + start - b.first_vaddr + 1);
        assert_eq!(got.name, demangle(name));
        assert_eq!(got.binary, exe.display().to_string());
        // A wrong build id: not used.
        let maps = vec![Mapping { build_id: Some(vec![1, 2, 3]), ..maps[0].clone() }];
        assert_eq!(Symbolizer::default().lookup(&maps, 0x5000_0000 + start - b.first_vaddr + 1).name, "");
        // Outside every mapping.
        assert_eq!(s.lookup(&maps, 0x10), Symbol::default());
    }
}
