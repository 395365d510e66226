//! The tables as Arrow record batches in memory: what the Python package hands to pyarrow
//! without copying (the `arrow` feature; the Parquet files are written without Arrow).

use crate::schema::{Column, Kind};
use crate::tables::{Cell, Sink, TableWriter, BATCH};
use arrow_array::builder::{BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt64Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use std::io;
use std::sync::{Arc, Mutex};

/// The Arrow schema of `columns`: the schema's types (int64, uint64, float64, boolean, utf8),
/// every column nullable.
pub fn schema(columns: &[Column]) -> SchemaRef {
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
    Arc::new(Schema::new(fields))
}

enum Builder {
    I(Int64Builder),
    U(UInt64Builder),
    F(Float64Builder),
    B(BooleanBuilder),
    S(StringBuilder),
}

impl Builder {
    fn new(k: Kind, capacity: usize) -> Builder {
        match k {
            Kind::I64 => Builder::I(Int64Builder::with_capacity(capacity)),
            Kind::U64 => Builder::U(UInt64Builder::with_capacity(capacity)),
            Kind::F64 => Builder::F(Float64Builder::with_capacity(capacity)),
            Kind::Bool => Builder::B(BooleanBuilder::with_capacity(capacity)),
            Kind::Str => Builder::S(StringBuilder::new()),
        }
    }

    /// Appends a cell, converted to the column's type where it has another (a value that
    /// cannot be converted is null).
    fn push(&mut self, c: &Cell<'_>) {
        match self {
            Builder::I(b) => b.append_option(c.to_i64()),
            Builder::U(b) => b.append_option(c.to_u64()),
            Builder::F(b) => b.append_option(c.to_f64()),
            Builder::B(b) => b.append_option(c.to_bool()),
            Builder::S(b) => b.append_option(c.to_text()),
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

/// Rows gathered into record batches of up to [`BATCH`] rows, in a table's schema.
pub(crate) struct Batcher {
    schema: SchemaRef,
    builders: Vec<Builder>,
    rows: usize,
}

impl Batcher {
    /// A batcher for `columns`, its builders starting with room for `capacity` rows.
    pub(crate) fn new(columns: &[Column], capacity: usize) -> Batcher {
        Batcher {
            schema: schema(columns),
            builders: columns.iter().map(|c| Builder::new(c.kind, capacity)).collect(),
            rows: 0,
        }
    }

    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Adds a row; gives the batch when it is full.
    pub(crate) fn push(&mut self, cells: &[Cell<'_>]) -> Result<Option<RecordBatch>, ArrowError> {
        for (b, c) in self.builders.iter_mut().zip(cells) {
            b.push(c);
        }
        self.rows += 1;
        if self.rows >= BATCH {
            return self.finish();
        }
        Ok(None)
    }

    /// The rows not given yet, as a batch (none when there are none).
    pub(crate) fn finish(&mut self) -> Result<Option<RecordBatch>, ArrowError> {
        if self.rows == 0 {
            return Ok(None);
        }
        self.rows = 0;
        let cols: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        RecordBatch::try_new(self.schema.clone(), cols).map(Some)
    }
}

/// A table in memory: its schema and record batches of up to 64 Ki rows.
#[derive(Debug, Clone)]
pub struct Table {
    /// The table's name (`callbacks`, `events/ros2.callback_start`).
    pub name: String,
    /// Its schema.
    pub schema: SchemaRef,
    /// Its rows.
    pub batches: Vec<RecordBatch>,
}

impl Table {
    /// Rows in all.
    pub fn rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

/// Keeps tables in memory, in the order they were completed.
#[derive(Debug, Default, Clone)]
pub struct ArrowSink {
    done: Arc<Mutex<Vec<Table>>>,
}

impl ArrowSink {
    /// An empty sink.
    pub fn new() -> ArrowSink {
        ArrowSink::default()
    }

    /// The tables completed so far (taken out of the sink).
    pub fn take(&self) -> Vec<Table> {
        std::mem::take(&mut *self.done.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

struct ArrowTable {
    name: String,
    rows: Batcher,
    batches: Vec<RecordBatch>,
    done: Arc<Mutex<Vec<Table>>>,
}

impl ArrowTable {
    fn keep(&mut self, batch: Result<Option<RecordBatch>, ArrowError>) -> io::Result<()> {
        let batch = batch.map_err(|e| io::Error::other(format!("{}: {e}", self.name)))?;
        self.batches.extend(batch);
        Ok(())
    }
}

impl Sink for ArrowSink {
    fn table(&mut self, name: &str, columns: &[Column]) -> io::Result<Box<dyn TableWriter>> {
        Ok(Box::new(ArrowTable {
            name: name.to_string(),
            rows: Batcher::new(columns, 1024),
            batches: Vec::new(),
            done: self.done.clone(),
        }))
    }
}

impl TableWriter for ArrowTable {
    fn row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        let batch = self.rows.push(cells);
        self.keep(batch)
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        let batch = self.rows.finish();
        self.keep(batch)?;
        let table = Table { name: self.name, schema: self.rows.schema().clone(), batches: self.batches };
        self.done.lock().unwrap_or_else(|e| e.into_inner()).push(table);
        Ok(())
    }
}
