//! No import cycle between the files of a crate: in every crate of the workspace (`crates/*/src`,
//! `python/src`), the files import one way.
//!
//! Each crate's sources are read as tokens (comments, doc comments and literals dropped): the
//! module tree comes from the `mod` declarations; a file depends on another when it names an
//! item defined there: by a `use` (of `crate::`, `super::`, `self::`, a child module or a name
//! in scope), or by a qualified path in its code (`crate::a::b::Item`, `super::x`, `child::f`,
//! `alias::Item`). A path is resolved to the file that defines its item, through re-exports
//! (`pub use`, globs). Neither a `mod` declaration nor a `pub use` is itself a dependency (a
//! name a `pub use` or a glob brings in is one where the code uses it); a `use` of a module is
//! not one either (the paths through it are).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Crates whose files are being split: their cycles are printed, not failed on. Remove a crate
/// from here once its cycles are gone.
const PENDING: &[&str] = &["ctf", "tracetools"];

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
    /// A string, character or number literal, or a lifetime.
    Lit,
}

#[derive(Debug, Clone)]
struct Token {
    t: Tok,
    line: u32,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The tokens of `src`, with their lines; comments and literals' contents dropped.
fn lex(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1u32);
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            let l = line;
            i = skip_string(&c, i + 1, &mut line);
            out.push(Token { t: Tok::Lit, line: l });
        } else if ch == '\'' {
            // A character literal ('a', '\n', '\u{1f}') or a lifetime ('a).
            let l = line;
            if at(i + 1) == '\\' {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && is_ident_char(c[i]) {
                    i += 1;
                }
            }
            out.push(Token { t: Tok::Lit, line: l });
        } else if ch.is_ascii_digit() {
            while i < c.len() && is_ident_char(c[i]) {
                i += 1;
            }
            out.push(Token { t: Tok::Lit, line });
        } else if is_ident_start(ch) {
            let start = i;
            while i < c.len() && is_ident_char(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let prefix = matches!(word.as_str(), "r" | "b" | "br" | "c" | "cr");
            if prefix && (at(i) == '"' || (at(i) == '#' && (at(i + 1) == '"' || at(i + 1) == '#'))) {
                // A (raw) string: r"..", r#".."#, b"..", br#".."#, c"..".
                let l = line;
                if word.contains('r') {
                    let mut hashes = 0;
                    while at(i) == '#' {
                        hashes += 1;
                        i += 1;
                    }
                    i += 1; // the opening quote
                    loop {
                        if i >= c.len() {
                            break;
                        }
                        if c[i] == '\n' {
                            line += 1;
                        }
                        if c[i] == '"' && (1..=hashes).all(|k| at(i + k) == '#') {
                            i += 1 + hashes;
                            break;
                        }
                        i += 1;
                    }
                } else {
                    i = skip_string(&c, i + 1, &mut line);
                }
                out.push(Token { t: Tok::Lit, line: l });
            } else if word == "b" && at(i) == '\'' {
                // A byte literal.
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push(Token { t: Tok::Lit, line });
            } else if word == "r" && at(i) == '#' && is_ident_start(at(i + 1)) {
                // A raw identifier.
                let start = i + 1;
                i += 1;
                while i < c.len() && is_ident_char(c[i]) {
                    i += 1;
                }
                out.push(Token { t: Tok::Ident(c[start..i].iter().collect()), line });
            } else {
                out.push(Token { t: Tok::Ident(word), line });
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Token { t: Tok::Sep, line });
            i += 2;
        } else {
            out.push(Token { t: Tok::Punct(ch), line });
            i += 1;
        }
    }
    out
}

/// The index after the closing quote of a string whose contents start at `i`.
fn skip_string(c: &[char], mut i: usize, line: &mut u32) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            '\n' => {
                *line += 1;
                i += 1
            }
            _ => i += 1,
        }
    }
    i
}

// ---------------------------------------------------------------------------------------------
// A crate's modules, items, imports and paths

/// A name a `use` brings in (`None`: a glob), from `path`.
#[derive(Debug, Clone)]
struct Use {
    module: usize,
    file: usize,
    path: Vec<String>,
    name: Option<String>,
    public: bool,
    line: u32,
}

/// A qualified path in code, or an identifier alone (one segment) that a `pub use` or a glob
/// may have brought in.
#[derive(Debug, Clone)]
struct Ref {
    module: usize,
    file: usize,
    path: Vec<String>,
    line: u32,
}

#[derive(Debug, Default)]
struct Module {
    parent: Option<usize>,
    /// The file the module is in (its own, or its parent's for an inline module).
    file: usize,
    children: HashMap<String, usize>,
    /// Item name → (public, file defining it).
    items: HashMap<String, (bool, usize)>,
    uses: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    Module(usize),
    /// An item, in this file.
    Item(usize),
}

#[derive(Debug, Default)]
struct Crate {
    /// File paths, relative to the crate's directory.
    files: Vec<String>,
    modules: Vec<Module>,
    uses: Vec<Use>,
    /// Qualified paths in code.
    refs: Vec<Ref>,
    /// Identifiers alone in code.
    words: Vec<Ref>,
    /// Files declared by `mod` but not found (generated, or a bug of this reader).
    missing: Vec<String>,
}

const ITEM_KEYWORDS: &[&str] = &["fn", "struct", "enum", "trait", "type", "const", "static", "union"];

impl Crate {
    /// The crate whose root file is `root` (`src/lib.rs`, `src/main.rs`); paths shown relative
    /// to `base`.
    fn read(root: &Path, base: &Path) -> Crate {
        let mut k = Crate::default();
        k.modules.push(Module::default());
        k.read_file(root, base, 0, true);
        k
    }

    /// Reads `path` as (part of) module `module`; `owns_dir`: whether its child modules are in
    /// its own directory (`lib.rs`, `main.rs`, `mod.rs`) rather than in one named after it.
    fn read_file(&mut self, path: &Path, base: &Path, module: usize, owns_dir: bool) {
        let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = self.files.len();
        self.files.push(path.strip_prefix(base).unwrap_or(path).display().to_string());
        if self.modules[module].file == 0 && module != 0 {
            self.modules[module].file = file;
        }
        let dir = if owns_dir { path.parent().unwrap().to_path_buf() } else { path.with_extension("") };
        let toks = lex(&src);
        self.parse(&toks, path, &dir, base, module, file);
    }

    fn new_module(&mut self, parent: usize, name: &str, file: usize) -> usize {
        let id = self.modules.len();
        self.modules.push(Module { parent: Some(parent), file, ..Default::default() });
        self.modules[parent].children.insert(name.to_string(), id);
        id
    }

    fn parse(&mut self, t: &[Token], path: &Path, dir: &Path, base: &Path, module: usize, file: usize) {
        let ident = |i: usize| match t.get(i).map(|x| &x.t) {
            Some(Tok::Ident(s)) => Some(s.as_str()),
            _ => None,
        };
        let punct = |i: usize, c: char| matches!(t.get(i).map(|x| &x.t), Some(Tok::Punct(p)) if *p == c);
        let sep = |i: usize| matches!(t.get(i).map(|x| &x.t), Some(Tok::Sep));
        // Whether the item keyword at `i` is public: `pub` or `pub(...)` before it, past the
        // qualifiers (`unsafe`, `async`, `const`, `extern "C"`).
        let public = |mut i: usize| {
            while i > 0 {
                i -= 1;
                match &t[i].t {
                    Tok::Ident(s) if matches!(s.as_str(), "unsafe" | "async" | "const" | "extern" | "default") => {}
                    Tok::Lit => {}
                    Tok::Ident(s) => return s == "pub",
                    Tok::Punct(')') => {
                        while i > 0 && !punct(i, '(') {
                            i -= 1;
                        }
                        return i > 0 && ident(i - 1) == Some("pub");
                    }
                    _ => return false,
                }
            }
            false
        };
        // (module, brace depth inside it, its directory for `mod x;`)
        let mut scopes: Vec<(usize, usize, PathBuf)> = vec![(module, 0, dir.to_path_buf())];
        let mut depth = 0usize;
        let mut i = 0;
        while i < t.len() {
            let (m, mdepth, mdir) = scopes.last().cloned().unwrap();
            match &t[i].t {
                Tok::Punct('{') => {
                    depth += 1;
                    i += 1;
                    continue;
                }
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if scopes.len() > 1 && depth < mdepth {
                        scopes.pop();
                    }
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let at_item_level = depth == mdepth;
            let word = ident(i);
            let after_sep_or_dot = i > 0 && (sep(i - 1) || punct(i - 1, '.') || punct(i - 1, '$'));
            match word {
                Some("use") if !after_sep_or_dot => {
                    let public = public(i);
                    let mut j = i + 1;
                    let mut found = Vec::new();
                    use_tree(t, &mut j, Vec::new(), &mut found);
                    for (p, name, line) in found {
                        self.uses.push(Use { module: m, file, path: p, name, public, line });
                        let u = self.uses.len() - 1;
                        self.modules[m].uses.push(u);
                    }
                    i = j;
                    continue;
                }
                Some("mod") if !after_sep_or_dot && at_item_level => {
                    if let Some(name) = ident(i + 1) {
                        if punct(i + 2, ';') {
                            let id = self.new_module(m, name, 0);
                            let candidates = [mdir.join(format!("{name}.rs")), mdir.join(name).join("mod.rs")];
                            match candidates.iter().find(|p| p.is_file()) {
                                Some(p) => {
                                    let owns = p.ends_with("mod.rs");
                                    self.read_file(p, base, id, owns);
                                }
                                None => self.missing.push(format!("{}: mod {name}", path.display())),
                            }
                            i += 3;
                            continue;
                        }
                        if punct(i + 2, '{') {
                            let id = self.new_module(m, name, file);
                            self.modules[m].items.insert(name.to_string(), (public(i), file));
                            depth += 1;
                            scopes.push((id, depth, mdir.join(name)));
                            i += 3;
                            continue;
                        }
                    }
                }
                Some("macro_rules") if punct(i + 1, '!') => {
                    if let Some(name) = ident(i + 2) {
                        self.modules[m].items.insert(name.to_string(), (true, file));
                    }
                }
                Some("include") if punct(i + 1, '!') && punct(i + 2, '(') => {
                    // `include!("file.rs")`: its text is part of this module (a generated file,
                    // `concat!(env!(..))`, cannot be read here).
                    if let Some(lit) = literal_after(&path_text(path), t, i + 3) {
                        let p = path.parent().unwrap().join(lit);
                        if p.is_file() {
                            let src = std::fs::read_to_string(&p).unwrap();
                            let f = self.files.len();
                            self.files.push(p.strip_prefix(base).unwrap_or(&p).display().to_string());
                            self.parse(&lex(&src), &p, &mdir, base, m, f);
                        }
                    }
                }
                Some(k) if at_item_level && ITEM_KEYWORDS.contains(&k) && !after_sep_or_dot => {
                    let mut j = i + 1;
                    if k == "const" && matches!(ident(j), Some("fn" | "unsafe" | "async" | "extern")) {
                        i += 1;
                        continue;
                    }
                    if k == "static" && ident(j) == Some("mut") {
                        j += 1;
                    }
                    if k == "union" && !matches!(t.get(j + 1).map(|x| &x.t), Some(Tok::Punct('{' | '<'))) {
                        // `union` is a keyword only before an item's name.
                    } else if let Some(name) = ident(j) {
                        let p = public(i);
                        self.modules[m].items.entry(name.to_string()).or_insert((p, file));
                    }
                    i = j + 1;
                    continue;
                }
                _ => {}
            }
            if let Some(w) = word {
                if !after_sep_or_dot {
                    let line = t[i].line;
                    let mut path = vec![w.to_string()];
                    let mut j = i + 1;
                    while sep(j) {
                        match ident(j + 1) {
                            Some(s) => path.push(s.to_string()),
                            None => break,
                        }
                        j += 2;
                    }
                    if path.len() > 1 {
                        self.refs.push(Ref { module: m, file, path, line });
                        i = j;
                        continue;
                    }
                    // A word alone, not a field (`x.a`), a label or a binding's type (`a: T`),
                    // nor a macro's name.
                    if !punct(i + 1, ':') && !punct(i + 1, '!') {
                        self.words.push(Ref { module: m, file, path, line });
                    }
                }
            }
            i += 1;
        }
    }

    fn parent(&self, m: usize) -> Option<usize> {
        self.modules[m].parent
    }

    fn is_inside(&self, mut m: usize, ancestor: usize) -> bool {
        loop {
            if m == ancestor {
                return true;
            }
            match self.parent(m) {
                Some(p) => m = p,
                None => return false,
            }
        }
    }

    /// What `path`, written in module `m`, names.
    fn resolve(&self, m: usize, path: &[String], depth: u32, memo: &mut Memo) -> Option<Target> {
        if depth > 24 || path.is_empty() {
            return None;
        }
        let mut cur = match path[0].as_str() {
            "crate" => Target::Module(0),
            "super" => Target::Module(self.parent(m)?),
            "self" => Target::Module(m),
            name => self.lookup(m, name, m, depth + 1, memo)?,
        };
        for s in &path[1..] {
            let Target::Module(mm) = cur else { return Some(cur) };
            cur = match s.as_str() {
                "super" => Target::Module(self.parent(mm)?),
                "self" => cur,
                name => self.lookup(mm, name, m, depth + 1, memo)?,
            };
        }
        Some(cur)
    }

    /// What `name` is in module `m`, seen from module `from`: a child module, an item of `m`, a
    /// name one of its `use`s brings in (a private one only from inside `m`), or one a glob does.
    fn lookup(&self, m: usize, name: &str, from: usize, depth: u32, memo: &mut Memo) -> Option<Target> {
        let inside = self.is_inside(from, m);
        let key = (m, name.to_string(), inside);
        if let Some(r) = memo.get(&key) {
            return *r;
        }
        // A cycle of globs (a module and its child each `use`-ing the other's `*`) ends here.
        memo.insert(key.clone(), None);
        let r = self.lookup_uncached(m, name, inside, depth, memo);
        memo.insert(key, r);
        r
    }

    fn lookup_uncached(&self, m: usize, name: &str, inside: bool, depth: u32, memo: &mut Memo) -> Option<Target> {
        let md = &self.modules[m];
        if let Some(&c) = md.children.get(name) {
            return Some(Target::Module(c));
        }
        if let Some(&(public, file)) = md.items.get(name) {
            if public || inside {
                return Some(Target::Item(file));
            }
        }
        for &u in &md.uses {
            let u = &self.uses[u];
            if u.name.as_deref() == Some(name) && (u.public || inside) {
                if let Some(t) = self.resolve(u.module, &u.path, depth + 1, memo) {
                    return Some(t);
                }
            }
        }
        for &u in &md.uses {
            let u = &self.uses[u];
            if u.name.is_none() && (u.public || inside) {
                if let Some(Target::Module(g)) = self.resolve(u.module, &u.path, depth + 1, memo) {
                    if let Some(t) = self.lookup(g, name, m, depth + 1, memo) {
                        return Some(t);
                    }
                }
            }
        }
        None
    }

    /// The dependencies between files: (from, to) → the lines and what they say.
    fn edges(&self) -> BTreeMap<(usize, usize), BTreeSet<(u32, String)>> {
        let mut memo = Memo::new();
        let mut e: BTreeMap<(usize, usize), BTreeSet<(u32, String)>> = BTreeMap::new();
        let mut add = |from: usize, t: Option<Target>, line: u32, what: String| {
            if let Some(Target::Item(to)) = t {
                if to != from {
                    e.entry((from, to)).or_default().insert((line, what));
                }
            }
        };
        for u in &self.uses {
            if u.public || u.name.is_none() {
                continue;
            }
            let t = self.resolve(u.module, &u.path, 0, &mut memo);
            add(u.file, t, u.line, format!("use {}", u.path.join("::")));
        }
        for r in &self.refs {
            let t = self.resolve(r.module, &r.path, 0, &mut memo);
            add(r.file, t, r.line, r.path.join("::"));
        }
        // Words a `pub use` or a glob brings in.
        let mut brought: HashMap<usize, (BTreeSet<&str>, bool)> = HashMap::new();
        for u in &self.uses {
            let b = brought.entry(u.module).or_default();
            match &u.name {
                Some(n) if u.public => {
                    b.0.insert(n);
                }
                None => b.1 = true,
                _ => {}
            }
        }
        for w in &self.words {
            let Some((names, glob)) = brought.get(&w.module) else { continue };
            if !glob && !names.contains(w.path[0].as_str()) {
                continue;
            }
            let t = self.lookup(w.module, &w.path[0], w.module, 0, &mut memo);
            add(w.file, t, w.line, w.path[0].clone());
        }
        e
    }
}

type Memo = HashMap<(usize, String, bool), Option<Target>>;

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// The string literal's text at `t[i]`, read again from the file (the tokens keep none).
fn literal_after(file: &str, t: &[Token], i: usize) -> Option<String> {
    if !matches!(t.get(i).map(|x| &x.t), Some(Tok::Lit)) {
        return None;
    }
    let src = std::fs::read_to_string(file).ok()?;
    let line = src.lines().nth(t[i].line as usize - 1)?;
    let s = line.split("include!(\"").nth(1)?;
    Some(s.split('"').next()?.to_string())
}

/// Reads a use tree at `t[*i]` (after `use`), up to and past its `;`: each name it brings in,
/// with its full path and line (`None`: a glob).
fn use_tree(t: &[Token], i: &mut usize, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>, u32)>) {
    let mut path = prefix;
    if matches!(t.get(*i).map(|x| &x.t), Some(Tok::Sep)) {
        // `use ::std::x`: an external crate.
        path.push(String::new());
        *i += 1;
    }
    loop {
        let Some(tok) = t.get(*i) else { return };
        match &tok.t {
            Tok::Ident(s) => {
                let line = tok.line;
                *i += 1;
                if s == "self" && !path.is_empty() {
                    // `a::{self, ..}`: `a` itself.
                } else {
                    path.push(s.clone());
                }
                match t.get(*i).map(|x| &x.t) {
                    Some(Tok::Sep) => {
                        *i += 1;
                        continue;
                    }
                    Some(Tok::Ident(a)) if a == "as" => {
                        let alias = match t.get(*i + 1).map(|x| &x.t) {
                            Some(Tok::Ident(n)) => n.clone(),
                            _ => "_".to_string(),
                        };
                        *i += 2;
                        out.push((path, Some(alias), line));
                    }
                    _ => {
                        let name = path.last().cloned();
                        out.push((path, name, line));
                    }
                }
                break;
            }
            Tok::Punct('*') => {
                out.push((path, None, tok.line));
                *i += 1;
                break;
            }
            Tok::Punct('{') => {
                *i += 1;
                loop {
                    match t.get(*i).map(|x| &x.t) {
                        None => return,
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            break;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        _ => use_tree(t, i, path.clone(), out),
                    }
                }
                break;
            }
            _ => return,
        }
    }
    if matches!(t.get(*i).map(|x| &x.t), Some(Tok::Punct(';'))) {
        *i += 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Cycles

/// A dependency of one file on another: (from, to, [(line, what the line names)]).
type Edge = (String, String, Vec<(u32, String)>);

/// A set of files each of which depends, through the others, on itself, and the dependencies
/// between them.
#[derive(Debug)]
struct Cycle {
    files: Vec<String>,
    edges: Vec<Edge>,
}

impl std::fmt::Display for Cycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "  import cycle among {}:", self.files.join(", "))?;
        for (from, to, lines) in &self.edges {
            // The first few lines say what to move; the rest, how many more there are.
            let l: Vec<String> = lines.iter().take(6).map(|(n, w)| format!("{n} `{w}`")).collect();
            let more = lines.len().saturating_sub(6);
            let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
            writeln!(f, "    {from} → {to}: line {}{more}", l.join(", line "))?;
        }
        Ok(())
    }
}

/// The cycles of the crate whose root is `root`: its strongly connected sets of files.
fn cycles(root: &Path, base: &Path) -> (Vec<Cycle>, Vec<String>) {
    let k = Crate::read(root, base);
    let edges = k.edges();
    let n = k.files.len();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges.keys() {
        next[a].push(b);
    }
    let mut out = Vec::new();
    for comp in strongly_connected(&next) {
        if comp.len() < 2 {
            continue;
        }
        let inside: BTreeSet<usize> = comp.iter().copied().collect();
        let mut files: Vec<String> = comp.iter().map(|&f| k.files[f].clone()).collect();
        files.sort();
        let mut es: Vec<Edge> = edges
            .iter()
            .filter(|((a, b), _)| inside.contains(a) && inside.contains(b))
            .map(|((a, b), l)| (k.files[*a].clone(), k.files[*b].clone(), l.iter().cloned().collect()))
            .collect();
        es.sort();
        out.push(Cycle { files, edges: es });
    }
    out.sort_by(|a, b| a.files.cmp(&b.files));
    (out, k.missing)
}

/// Tarjan's strongly connected components.
fn strongly_connected(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct S<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        n: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut S<'_>, v: usize) {
        s.index[v] = Some(s.n);
        s.low[v] = s.n;
        s.n += 1;
        s.stack.push(v);
        s.on[v] = true;
        for k in 0..s.next[v].len() {
            let w = s.next[v][k];
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            s.out.push(comp);
        }
    }
    let n = next.len();
    let mut s =
        S { next, index: vec![None; n], low: vec![0; n], on: vec![false; n], stack: Vec::new(), n: 0, out: Vec::new() };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Every crate root of the workspace: (crate name, root file, crate directory).
fn crate_roots() -> Vec<(String, PathBuf, PathBuf)> {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ws = ws.canonicalize().unwrap();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(ws.join("crates")).unwrap().flatten().map(|e| e.path()).collect();
    dirs.push(ws.join("python"));
    dirs.sort();
    let mut roots = Vec::new();
    for d in dirs {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        for root in ["src/lib.rs", "src/main.rs"] {
            if d.join(root).is_file() {
                roots.push((name.clone(), d.join(root), d.clone()));
            }
        }
    }
    roots
}

#[test]
fn no_import_cycle_between_the_files_of_a_crate() {
    let roots = crate_roots();
    assert!(roots.iter().any(|r| r.0 == "analysis") && roots.iter().any(|r| r.0 == "python"), "{roots:?}");
    let mut failed = String::new();
    for (name, root, dir) in roots {
        let (cs, missing) = cycles(&root, &dir);
        for m in missing {
            // A `mod` whose file cannot be found: this reader is wrong, or the crate does not build.
            failed += &format!("{name}: {m}: no file\n");
        }
        if cs.is_empty() {
            continue;
        }
        let text: String = cs.iter().map(|c| c.to_string()).collect();
        if PENDING.contains(&name.as_str()) {
            eprintln!("{name} (pending, not failed on):\n{text}");
        } else {
            failed += &format!("{name} ({}):\n{text}", root.strip_prefix(&dir).unwrap().display());
        }
    }
    assert!(failed.is_empty(), "files that import each other:\n{failed}");
}

// ---------------------------------------------------------------------------------------------
// The reader itself, on small crates

/// The cycles of a crate made of `files` (path, text), as text.
fn cycles_of(files: &[(&str, &str)]) -> String {
    let dir = rostrace_testkit::TempDir::new("import-cycles");
    for (p, text) in files {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let (cs, missing) = cycles(&dir.join("src/lib.rs"), dir.path());
    assert!(missing.is_empty(), "{missing:?}");
    cs.iter().map(|c| c.to_string()).collect()
}

#[test]
fn two_files_that_use_each_other_are_a_cycle() {
    let found = cycles_of(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
        ("src/b.rs", "pub struct B;\n\nfn f() -> crate::a::A { todo!() }\n"),
    ]);
    assert_eq!(
        found,
        "  import cycle among src/a.rs, src/b.rs:\n    src/a.rs → src/b.rs: line 1 `use crate::b::B`\n    \
         src/b.rs → src/a.rs: line 3 `crate::a::A`\n"
    );
}

#[test]
fn a_reexport_is_resolved_to_the_file_defining_the_item_and_is_no_dependency_itself() {
    // lib.rs re-exports both; a and b reach each other through it; lib.rs is in no cycle.
    let found = cycles_of(&[
        ("src/lib.rs", "mod a;\nmod b;\npub use a::A;\npub use b::{B, C as D};\n"),
        ("src/a.rs", "pub struct A;\nfn f(_: crate::D) {}\n"),
        ("src/b.rs", "pub struct B;\npub struct C;\nuse crate::A;\n"),
    ]);
    assert_eq!(
        found,
        "  import cycle among src/a.rs, src/b.rs:\n    src/a.rs → src/b.rs: line 2 `crate::D`\n    \
         src/b.rs → src/a.rs: line 3 `use crate::A`\n"
    );
    // Without the second edge, none.
    let found = cycles_of(&[
        ("src/lib.rs", "mod a;\nmod b;\npub use a::A;\npub use b::{B, C as D};\n"),
        ("src/a.rs", "pub struct A;\nfn f(_: crate::D) {}\n"),
        ("src/b.rs", "pub struct B;\npub struct C;\n"),
    ]);
    assert_eq!(found, "");
}

#[test]
fn a_parent_using_its_child_that_uses_it_back_is_a_cycle() {
    let found = cycles_of(&[
        ("src/lib.rs", "mod engine;\n"),
        ("src/engine/mod.rs", "mod pass;\npub struct Handlers;\nfn run() { pass::go() }\n"),
        ("src/engine/pass.rs", "pub fn go() {}\nfn h(_: &super::Handlers) {}\n"),
    ]);
    assert_eq!(
        found,
        "  import cycle among src/engine/mod.rs, src/engine/pass.rs:\n    src/engine/mod.rs → src/engine/pass.rs: \
         line 3 `pass::go`\n    src/engine/pass.rs → src/engine/mod.rs: line 2 `super::Handlers`\n"
    );
}

#[test]
fn comments_strings_and_inline_test_modules_are_not_dependencies() {
    let found = cycles_of(&[
        ("src/lib.rs", "mod a;\nmod b;\n"),
        (
            "src/a.rs",
            "//! See [`crate::b::B`].\npub struct A;\nconst S: &str = \"crate::b::B\";\n/* crate::b::B */\n\
             #[cfg(test)]\nmod tests {\n    use super::*;\n    fn t(_: A) {}\n}\n",
        ),
        ("src/b.rs", "pub struct B;\nuse crate::a::A;\n"),
    ]);
    assert_eq!(found, "");
}

#[test]
fn names_a_glob_brings_in_are_dependencies_where_they_are_used() {
    let files = |user: &'static str| {
        cycles_of(&[
            ("src/lib.rs", "mod model;\nmod link;\n"),
            ("src/model.rs", "pub struct Key;\nfn f(_: crate::link::Flow) {}\n"),
            ("src/link.rs", user),
        ])
    };
    assert_eq!(files("use crate::model::*;\npub struct Flow;\n"), "");
    assert_eq!(
        files("use crate::model::*;\npub struct Flow;\nfn g(k: Key) {}\n"),
        "  import cycle among src/link.rs, src/model.rs:\n    src/link.rs → src/model.rs: line 3 `Key`\n    \
         src/model.rs → src/link.rs: line 2 `crate::link::Flow`\n"
    );
}
