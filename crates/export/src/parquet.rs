//! Parquet: `DIR/<table>/<recording>.parquet`, the schema's types (int64, uint64, double,
//! boolean, string; every column nullable), Snappy-compressed, a row group per 64 Ki rows.

use crate::arrow::{Batcher, BATCH};
use crate::names::{self, Renamed};
use crate::schema::Column;
use crate::tables::{Cell, Sink, TableWriter};
use arrow_array::RecordBatch;
use arrow_schema::ArrowError;
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

struct ParquetTable {
    rows: Batcher,
    writer: ArrowWriter<File>,
    path: PathBuf,
}

fn err(path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{}: {e}", path.display()))
}

impl ParquetTable {
    fn write(&mut self, batch: Result<Option<RecordBatch>, ArrowError>) -> io::Result<()> {
        if let Some(batch) = batch.map_err(|e| err(&self.path, e))? {
            self.writer.write(&batch).map_err(|e| err(&self.path, e))?;
        }
        Ok(())
    }
}

impl Sink for ParquetSink {
    fn table(&mut self, name: &str, columns: &[Column]) -> io::Result<Box<dyn TableWriter>> {
        names::check_table(name)?;
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).map_err(|e| err(&dir, e))?;
        let path = dir.join(&self.file);
        let rows = Batcher::new(columns, BATCH);
        let f = File::create(&path).map_err(|e| err(&path, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(BATCH))
            .set_created_by("rostrace".into())
            .build();
        let writer = ArrowWriter::try_new(f, rows.schema().clone(), Some(props)).map_err(|e| err(&path, e))?;
        Ok(Box::new(ParquetTable { rows, writer, path }))
    }
}

impl TableWriter for ParquetTable {
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        let batch = self.rows.push(cells);
        self.write(batch)
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        let batch = self.rows.finish();
        self.write(batch)?;
        let path = self.path.clone();
        self.writer.close().map_err(|e| err(&path, e))?;
        Ok(())
    }
}
