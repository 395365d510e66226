//! A streamed path's records and response times, kept in files as they are given out
//! ([`PathOutput`]) and read back one by one as `rostrace e2e --json` writes them: the JSON of a
//! recording of any length, in memory bounded by a slice of it. The files are removed when done.

use rostrace_analysis::paths::{Case, Each, PathOutput, RecordStatus};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

/// A cell of no value, as kept in the file (no timestamp is this).
const NONE: i64 = i64::MIN;

/// The files of a streamed path's records and response times.
pub struct Spill {
    dir: PathBuf,
    rows: BufWriter<File>,
    /// Cells per record (known at the first one).
    width: usize,
    responses: Vec<(Case, BufWriter<File>)>,
    error: Option<io::Error>,
}

impl Spill {
    /// Files for the records and the response times of `cases`, in a directory of their own
    /// under the system's temporary directory.
    pub fn new(cases: &[Case]) -> io::Result<Spill> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("rostrace-e2e-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let create = |name: &str| File::create(dir.join(name)).map(|f| BufWriter::with_capacity(1 << 16, f));
        let made = (|| {
            let rows = create("rows")?;
            let responses = cases.iter().map(|c| Ok((*c, create(c.name())?))).collect::<io::Result<Vec<_>>>()?;
            Ok((rows, responses))
        })();
        match made {
            Ok((rows, responses)) => Ok(Spill { dir, rows, width: 0, responses, error: None }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    /// Everything written out; the first error of writing, if any.
    pub fn done(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.rows.flush()?;
        for (_, w) in &mut self.responses {
            w.flush()?;
        }
        Ok(())
    }

    /// The records, read back in order.
    pub fn rows(&self) -> impl Fn() -> Box<dyn Iterator<Item = Vec<Option<i64>>>> + Clone {
        let (path, width) = (self.dir.join("rows"), self.width);
        move || -> Box<dyn Iterator<Item = Vec<Option<i64>>>> {
            if width == 0 {
                return Box::new(std::iter::empty());
            }
            Box::new(values(&path, width).map(|v| v.into_iter().map(|x| (x != NONE).then_some(x)).collect()))
        }
    }

    /// The response times of `case`, read back in order.
    pub fn responses(&self, case: Case) -> Each<'_, (i64, i64)> {
        let path = self.dir.join(case.name());
        Each::Read(Box::new(move || Box::new(values(&path, 2).map(|v| (v[0], v[1])))))
    }

    fn write(w: &mut BufWriter<File>, error: &mut Option<io::Error>, values: impl Iterator<Item = i64>) {
        if error.is_some() {
            return;
        }
        for v in values {
            if let Err(e) = w.write_all(&v.to_le_bytes()) {
                *error = Some(e);
                return;
            }
        }
    }
}

/// The values of the file at `path`, `n` at a time (none when it cannot be read: it was written
/// by this process a moment before).
fn values(path: &std::path::Path, n: usize) -> impl Iterator<Item = Vec<i64>> {
    let mut r = File::open(path).ok().map(|f| BufReader::with_capacity(1 << 16, f));
    let mut buf = vec![0u8; 8 * n];
    std::iter::from_fn(move || {
        r.as_mut()?.read_exact(&mut buf).ok()?;
        Some(buf.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default())).collect())
    })
}

impl PathOutput for Spill {
    fn record(&mut self, _index: u64, row: &[Option<i64>], _status: RecordStatus) {
        self.width = row.len();
        Spill::write(&mut self.rows, &mut self.error, row.iter().map(|c| c.unwrap_or(NONE)));
    }

    fn response(&mut self, case: Case, input: i64, response: i64) {
        if let Some((_, w)) = self.responses.iter_mut().find(|(c, _)| *c == case) {
            Spill::write(w, &mut self.error, [input, response].into_iter());
        }
    }
}

impl crate::follow::Select for Spill {
    fn select(&mut self, _: usize) -> &mut dyn PathOutput {
        self
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
