//! CSV: `DIR/<table>/<recording>.csv`, a header row, RFC 4180 quoting; an empty field is null.

use crate::schema::Column;
use crate::tables::{Cell, Sink, TableWriter};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes tables as CSV files under a directory.
pub struct CsvSink {
    dir: PathBuf,
    file: String,
}

impl CsvSink {
    /// Tables go to `dir/<table>/<recording>.csv`.
    pub fn new(dir: &Path, recording: &str) -> CsvSink {
        CsvSink { dir: dir.to_path_buf(), file: format!("{recording}.csv") }
    }
}

struct CsvTable {
    out: BufWriter<File>,
    path: PathBuf,
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
        Ok(Box::new(CsvTable { out, path }))
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
                Cell::Str(s) => field(o, s)?,
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
}
