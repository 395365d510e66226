//! Parquet: `DIR/<table>/<recording>.parquet`, the schema's types (int64, uint64, double,
//! boolean, string; every column nullable), Snappy-compressed, a row group per 64 Ki rows.
//!
//! Written with the parquet crate's column writers, not through Arrow: the files carry the
//! Parquet types and logical types every reader maps the same way (pyarrow, pandas, polars,
//! DuckDB, Spark), and `rostrace` builds without Arrow's compute kernels.

use crate::names::{self, Renamed};
use crate::schema::{Column, Kind};
use crate::tables::{Cell, Sink, TableWriter, BATCH};
use bytes::Bytes;
use parquet::basic::{Compression, IntType, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Writes tables as Parquet files under a directory.
pub struct ParquetSink {
    dir: PathBuf,
    file: String,
    renamed: Option<Renamed>,
}

impl ParquetSink {
    /// Tables go to `dir/<table>/<recording>.parquet`; a recording name that is not a safe file
    /// name, or too long for one, gets another ([`names::file_name`]; see [`ParquetSink::file`]).
    pub fn new(dir: &Path, recording: &str) -> ParquetSink {
        let (file, renamed) = names::file_name(recording, ".parquet");
        ParquetSink { dir: dir.to_path_buf(), file, renamed }
    }

    /// The file name of the recording in each table's directory, and why it is not the
    /// recording's name when it is not.
    pub fn file(&self) -> (&str, Option<Renamed>) {
        (&self.file, self.renamed)
    }
}

/// The Parquet schema of `columns`: optional columns of int64, int64 annotated unsigned,
/// double, boolean and UTF-8 byte arrays (as Arrow's writer maps int64, uint64, float64,
/// boolean and utf8).
fn schema(columns: &[Column]) -> Result<Type, ParquetError> {
    let fields = columns
        .iter()
        .map(|c| {
            let (physical, logical) = match c.kind {
                Kind::I64 => (PhysicalType::INT64, None),
                Kind::U64 => {
                    (PhysicalType::INT64, Some(LogicalType::Integer(IntType { bit_width: 64, is_signed: false })))
                }
                Kind::F64 => (PhysicalType::DOUBLE, None),
                Kind::Bool => (PhysicalType::BOOLEAN, None),
                Kind::Str => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(&c.name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Type::group_type_builder("schema").with_fields(fields).build()
}

/// A column's values of the rows not written yet (the present ones), and a definition level
/// per row (1: present, 0: null).
enum Values {
    I(Vec<i64>),
    F(Vec<f64>),
    B(Vec<bool>),
    /// The strings one after the other, and where each ends (one allocation for them all).
    S(Vec<u8>, Vec<usize>),
}

struct Buffered {
    values: Values,
    defined: Vec<i16>,
    /// Unsigned: an int64 column whose values are u64's bits.
    unsigned: bool,
}

impl Buffered {
    fn new(kind: Kind) -> Buffered {
        let values = match kind {
            Kind::I64 | Kind::U64 => Values::I(Vec::new()),
            Kind::F64 => Values::F(Vec::new()),
            Kind::Bool => Values::B(Vec::new()),
            Kind::Str => Values::S(Vec::new(), Vec::new()),
        };
        Buffered { values, defined: Vec::new(), unsigned: kind == Kind::U64 }
    }

    /// Appends a cell, converted to the column's type where it has another (a value that
    /// cannot be converted is null).
    fn push(&mut self, c: &Cell<'_>) {
        let present = match &mut self.values {
            Values::I(v) if self.unsigned => c.to_u64().map(|x| v.push(x as i64)),
            Values::I(v) => c.to_i64().map(|x| v.push(x)),
            Values::F(v) => c.to_f64().map(|x| v.push(x)),
            Values::B(v) => c.to_bool().map(|x| v.push(x)),
            Values::S(buf, ends) => c.to_text().map(|s| {
                buf.extend_from_slice(s.as_bytes());
                ends.push(buf.len());
            }),
        };
        self.defined.push(present.is_some() as i16);
    }
}

struct ParquetTable {
    columns: Vec<Buffered>,
    rows: usize,
    writer: SerializedFileWriter<File>,
    path: PathBuf,
}

fn err(path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{}: {e}", path.display()))
}

impl ParquetTable {
    /// Writes the buffered rows as a row group.
    fn flush(&mut self) -> Result<(), ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        self.rows = 0;
        let mut group = self.writer.next_row_group()?;
        for c in &mut self.columns {
            let Some(mut col) = group.next_column()? else {
                return Err(ParquetError::General("fewer columns in the schema than buffered".into()));
            };
            let def = Some(&c.defined[..]);
            match &mut c.values {
                Values::I(v) => col.typed::<Int64Type>().write_batch(v, def, None)?,
                Values::F(v) => col.typed::<DoubleType>().write_batch(v, def, None)?,
                Values::B(v) => col.typed::<BoolType>().write_batch(v, def, None)?,
                Values::S(buf, ends) => {
                    let all = Bytes::from(std::mem::take(buf));
                    let starts = std::iter::once(0).chain(ends.iter().copied());
                    let v: Vec<ByteArray> = starts.zip(ends.iter()).map(|(a, &b)| all.slice(a..b).into()).collect();
                    col.typed::<ByteArrayType>().write_batch(&v, def, None)?
                }
            };
            col.close()?;
            match &mut c.values {
                Values::I(v) => v.clear(),
                Values::F(v) => v.clear(),
                Values::B(v) => v.clear(),
                Values::S(_, ends) => ends.clear(),
            }
            c.defined.clear();
        }
        group.close()?;
        Ok(())
    }
}

impl Sink for ParquetSink {
    fn table(&mut self, name: &str, columns: &[Column]) -> io::Result<Box<dyn TableWriter>> {
        names::check_table(name)?;
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| err(&dir, e))?;
        let path = dir.join(&self.file);
        let f = File::create(&path).map_err(|e| err(&path, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(BATCH))
            .set_created_by("rostrace".into())
            .build();
        let schema = schema(columns).map_err(|e| err(&path, e))?;
        let writer = SerializedFileWriter::new(f, Arc::new(schema), Arc::new(props)).map_err(|e| err(&path, e))?;
        let columns = columns.iter().map(|c| Buffered::new(c.kind)).collect();
        Ok(Box::new(ParquetTable { columns, rows: 0, writer, path }))
    }
}

impl TableWriter for ParquetTable {
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        for (i, b) in self.columns.iter_mut().enumerate() {
            b.push(cells.get(i).unwrap_or(&Cell::Null));
        }
        self.rows += 1;
        if self.rows >= BATCH {
            self.flush().map_err(|e| err(&self.path, e))?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.flush().map_err(|e| err(&self.path, e))?;
        let path = self.path.clone();
        self.writer.close().map_err(|e| err(&path, e))?;
        Ok(())
    }
}
