//! CSV: `DIR/<table>/<recording>.csv`, a header row, RFC 4180 quoting; an empty field is null.

use crate::names::{self, Renamed};
use crate::schema::Column;
use crate::tables::{Cell, Sink, TableWriter};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes tables as CSV files under a directory.
pub struct CsvSink {
    dir: PathBuf,
    file: String,
    renamed: Option<Renamed>,
    safe: bool,
}

impl CsvSink {
    /// Tables go to `dir/<table>/<recording>.csv`; a recording name that is not a safe file
    /// name, or too long for one, gets another ([`names::file_name`]; see [`CsvSink::file`]).
    pub fn new(dir: &Path, recording: &str) -> CsvSink {
        let (file, renamed) = names::file_name(recording, ".csv");
        CsvSink { dir: dir.to_path_buf(), file, renamed, safe: false }
    }

    /// The file name of the recording in each table's directory, and why it is not the
    /// recording's name when it is not.
    pub fn file(&self) -> (&str, Option<Renamed>) {
        (&self.file, self.renamed)
    }

    /// Text fields that a spreadsheet would take for a formula (starting with `=`, `+`, `-`,
    /// `@`, a tab or a carriage return) are written with a `'` before them, which spreadsheets
    /// show as text; numbers are written as they are.
    pub fn spreadsheet_safe(mut self, safe: bool) -> CsvSink {
        self.safe = safe;
        self
    }
}

struct CsvTable {
    out: BufWriter<File>,
    path: PathBuf,
    safe: bool,
}

/// Whether a spreadsheet would read a text field as a formula.
fn formula_like(s: &str) -> bool {
    s.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// A text field, made spreadsheet-safe first when `safe` (see [`CsvSink::spreadsheet_safe`]).
fn text(out: &mut impl Write, s: &str, safe: bool) -> io::Result<()> {
    if safe && formula_like(s) {
        field(out, &format!("'{s}"))
    } else {
        field(out, s)
    }
}

fn field(out: &mut impl Write, s: &str) -> io::Result<()> {
    if s.is_empty() || s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        out.write_all(b"\"")?;
        out.write_all(s.replace('"', "\"\"").as_bytes())?;
        out.write_all(b"\"")
    } else {
        out.write_all(s.as_bytes())
    }
}

impl Sink for CsvSink {
    fn table(&mut self, name: &str, columns: &[Column]) -> io::Result<Box<dyn TableWriter>> {
        names::check_table(name)?;
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        let path = dir.join(&self.file);
        let f = File::create(&path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let mut out = BufWriter::with_capacity(1 << 16, f);
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            field(&mut out, &c.name)?;
        }
        out.write_all(b"\n")?;
        Ok(Box::new(CsvTable { out, path, safe: self.safe }))
    }
}

impl TableWriter for CsvTable {
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        let o = &mut self.out;
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                o.write_all(b",")?;
            }
            match c {
                Cell::Null => {}
                Cell::I64(v) => write!(o, "{v}")?,
                Cell::U64(v) => write!(o, "{v}")?,
                Cell::F64(v) => write!(o, "{v}")?,
                Cell::Bool(v) => o.write_all(if *v { b"true" } else { b"false" })?,
                Cell::Str(s) => text(o, s, self.safe)?,
            }
        }
        o.write_all(b"\n")
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.out.flush().map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        let q = |s: &str| {
            let mut v = Vec::new();
            field(&mut v, s).unwrap();
            String::from_utf8(v).unwrap()
        };
        assert_eq!(q("/topic"), "/topic");
        assert_eq!(q(""), "\"\"");
        assert_eq!(q("a,b"), "\"a,b\"");
        assert_eq!(q("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(q("two\nlines"), "\"two\nlines\"");
        assert_eq!(q(" padded"), "\" padded\"");
    }

    #[test]
    fn spreadsheet_safe_text() {
        let q = |s: &str, safe: bool| {
            let mut v = Vec::new();
            text(&mut v, s, safe).unwrap();
            String::from_utf8(v).unwrap()
        };
        for f in ["=HYPERLINK(\"x\")", "+1", "-2+3", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(q(f, false), {
                let mut v = Vec::new();
                field(&mut v, f).unwrap();
                String::from_utf8(v).unwrap()
            });
            assert!(q(f, true).trim_start_matches('"').starts_with('\''), "{f}: {}", q(f, true));
        }
        assert_eq!(q("=a,b", true), "\"'=a,b\"");
        assert_eq!(q("/topic", true), "/topic");
        assert_eq!(q("", true), "\"\"");
    }
}
