//! Parquet: `DIR/<table>/<recording>.parquet`, the schema's types (int64, uint64, double,
//! boolean, string; every column nullable), Snappy-compressed, a row group per 64 Ki rows.

use crate::schema::{Column, Kind};
use crate::tables::{Cell, Sink, TableWriter};
use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const BATCH: usize = 64 * 1024;

/// Writes tables as Parquet files under a directory.
pub struct ParquetSink {
    dir: PathBuf,
    file: String,
}

impl ParquetSink {
    /// Tables go to `dir/<table>/<recording>.parquet`.
    pub fn new(dir: &Path, recording: &str) -> ParquetSink {
        ParquetSink { dir: dir.to_path_buf(), file: format!("{recording}.parquet") }
    }
}

enum Builder {
    I(Int64Builder),
    U(UInt64Builder),
    F(Float64Builder),
    B(BooleanBuilder),
    S(StringBuilder),
}

impl Builder {
    fn new(k: Kind) -> Builder {
        match k {
            Kind::I64 => Builder::I(Int64Builder::with_capacity(BATCH)),
            Kind::U64 => Builder::U(UInt64Builder::with_capacity(BATCH)),
            Kind::F64 => Builder::F(Float64Builder::with_capacity(BATCH)),
            Kind::Bool => Builder::B(BooleanBuilder::with_capacity(BATCH)),
            Kind::Str => Builder::S(StringBuilder::new()),
        }
    }

    /// Appends a cell, converted to the column's type where it has another (a value that
    /// cannot be converted is null).
    fn push(&mut self, c: &Cell<'_>) {
        match self {
            Builder::I(b) => b.append_option(match c {
                Cell::I64(v) => Some(*v),
                Cell::U64(v) => i64::try_from(*v).ok(),
                Cell::Bool(v) => Some(*v as i64),
                _ => None,
            }),
            Builder::U(b) => b.append_option(match c {
                Cell::U64(v) => Some(*v),
                Cell::I64(v) => u64::try_from(*v).ok(),
                _ => None,
            }),
            Builder::F(b) => b.append_option(match c {
                Cell::F64(v) => Some(*v),
                Cell::I64(v) => Some(*v as f64),
                Cell::U64(v) => Some(*v as f64),
                _ => None,
            }),
            Builder::B(b) => b.append_option(match c {
                Cell::Bool(v) => Some(*v),
                _ => None,
            }),
            Builder::S(b) => match c {
                Cell::Null => b.append_null(),
                Cell::Str(s) => b.append_value(s),
                Cell::I64(v) => b.append_value(v.to_string()),
                Cell::U64(v) => b.append_value(v.to_string()),
                Cell::F64(v) => b.append_value(v.to_string()),
                Cell::Bool(v) => b.append_value(v.to_string()),
            },
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::I(b) => Arc::new(b.finish()),
            Builder::U(b) => Arc::new(b.finish()),
            Builder::F(b) => Arc::new(b.finish()),
            Builder::B(b) => Arc::new(b.finish()),
            Builder::S(b) => Arc::new(b.finish()),
        }
    }
}

struct ParquetTable {
    schema: SchemaRef,
    builders: Vec<Builder>,
    rows: usize,
    writer: ArrowWriter<File>,
    path: PathBuf,
}

fn err(path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{}: {e}", path.display()))
}

impl ParquetTable {
    fn flush(&mut self) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let cols: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        let batch = RecordBatch::try_new(self.schema.clone(), cols).map_err(|e| err(&self.path, e))?;
        self.writer.write(&batch).map_err(|e| err(&self.path, e))?;
        self.rows = 0;
        Ok(())
    }
}

impl Sink for ParquetSink {
    fn table(&mut self, name: &str, columns: &[Column]) -> io::Result<Box<dyn TableWriter>> {
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| err(&dir, e))?;
        let path = dir.join(&self.file);
        let fields: Vec<Field> = columns
            .iter()
            .map(|c| {
                let t = match c.kind {
                    Kind::I64 => DataType::Int64,
                    Kind::U64 => DataType::UInt64,
                    Kind::F64 => DataType::Float64,
                    Kind::Bool => DataType::Boolean,
                    Kind::Str => DataType::Utf8,
                };
                Field::new(&c.name, t, true)
            })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let f = File::create(&path).map_err(|e| err(&path, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(BATCH))
            .set_created_by("rostrace".into())
            .build();
        let writer = ArrowWriter::try_new(f, schema.clone(), Some(props)).map_err(|e| err(&path, e))?;
        let builders = columns.iter().map(|c| Builder::new(c.kind)).collect();
        Ok(Box::new(ParquetTable { schema, builders, rows: 0, writer, path }))
    }
}

impl TableWriter for ParquetTable {
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        for (b, c) in self.builders.iter_mut().zip(cells) {
            b.push(c);
        }
        self.rows += 1;
        if self.rows >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.flush()?;
        let path = self.path.clone();
        self.writer.close().map_err(|e| err(&path, e))?;
        Ok(())
    }
}
