//! Parquet: `DIR/<table>/<recording>.parquet`, the schema's types (int64, uint64, double,
//! boolean, string; every column nullable), Snappy-compressed, a row group per 64 Ki rows.

use crate::arrow::{schema, Builder, BATCH};
use crate::schema::Column;
use crate::tables::{Cell, Sink, TableWriter};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

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
        let schema = schema(columns);
        let f = File::create(&path).map_err(|e| err(&path, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(BATCH))
            .set_created_by("rostrace".into())
            .build();
        let writer = ArrowWriter::try_new(f, schema.clone(), Some(props)).map_err(|e| err(&path, e))?;
        let builders = columns.iter().map(|c| Builder::new(c.kind, BATCH)).collect();
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
