//! The time window of an analysis.

/// A bound of the analysis window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Nanoseconds after the first event of the traces.
    Relative(i64),
    /// Nanoseconds since the Unix epoch.
    Absolute(i64),
}

/// The time window whose runtime events (callback runs, publications, takes, ...) are
/// analyzed. Initialization events are read whatever their time: they declare the objects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// From (inclusive); the start of the traces when `None`.
    pub begin: Option<Bound>,
    /// To (inclusive); the end of the traces when `None`.
    pub end: Option<Bound>,
}

impl Window {
    /// Whether the window is the whole trace.
    pub fn is_all(&self) -> bool {
        self.begin.is_none() && self.end.is_none()
    }

    /// The window in ns since the epoch, for traces that start at `start`.
    pub fn resolve(&self, start: i64) -> (i64, i64) {
        let at = |b: Bound| match b {
            Bound::Relative(d) => start.saturating_add(d),
            Bound::Absolute(t) => t,
        };
        (self.begin.map_or(i64::MIN, at), self.end.map_or(i64::MAX, at))
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.frac][Z|+HH:MM|-HH:MM]` (UTC when no offset) to ns since the epoch.
fn parse_datetime(s: &str) -> Option<i64> {
    let (date, time) = s.split_once(['T', ' '])?;
    let mut d = date.split('-');
    let (y, mo, da): (i64, i64, i64) = (d.next()?.parse().ok()?, d.next()?.parse().ok()?, d.next()?.parse().ok()?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if d.next().is_some() || !(1..=12).contains(&mo) || !(1..=month_days[mo as usize - 1]).contains(&da) {
        return None;
    }
    let (clock, offset_s) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(k) = time.rfind(['+', '-']).filter(|&k| k > 0) {
        let (c, off) = time.split_at(k);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        // +HH:MM, +HHMM or +HH.
        let digits = off[1..].replace(':', "");
        let two = |x: &str| (x.len() == 2 && x.bytes().all(|b| b.is_ascii_digit())).then(|| x.parse::<i64>().ok())?;
        let (h, m) = match (digits.len(), off[1..].find(':')) {
            (2, None) => (two(&digits)?, 0),
            (4, None | Some(2)) => (two(&digits[..2])?, two(&digits[2..])?),
            _ => return None,
        };
        if h > 23 || m > 59 {
            return None;
        }
        (c, sign * (h * 3600 + m * 60))
    } else {
        (time, 0)
    };
    let mut c = clock.split(':');
    let h: i64 = c.next()?.parse().ok()?;
    let mi: i64 = c.next()?.parse().ok()?;
    let sec = c.next().unwrap_or("0");
    if c.next().is_some() || h > 23 || mi > 59 {
        return None;
    }
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let whole: i64 = whole.parse().ok()?;
    if whole > 60 || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_ns: i64 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().ok()? };
    let secs = rostrace_ctf::time::days_from_civil(y, mo, da) * 86_400 + h * 3600 + mi * 60 + whole - offset_s;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// A bound of a window (`rostrace analyze --begin`/`--end`): seconds after the trace start (`2.5`, `+2.5s`, `1500ms`, `20us`,
/// `100ns`), ns since the epoch (an integer of 16 digits or more), or a UTC date and time.
pub fn parse_time(s: &str) -> Result<Bound, String> {
    let t = s.trim();
    let bad = || {
        format!(
            "invalid time {s:?}: expected seconds after the trace start (2.5, +2.5s, 1500ms), ns since the \
             epoch, or a date like 2021-10-06T12:00:00Z"
        )
    };
    if t.contains('T') || (t.len() > 10 && t.as_bytes().get(4) == Some(&b'-')) {
        return parse_datetime(t).map(Bound::Absolute).ok_or_else(bad);
    }
    let rel = t.strip_prefix('+');
    let body = rel.unwrap_or(t);
    if rel.is_none() && body.len() >= 16 && body.bytes().all(|b| b.is_ascii_digit()) {
        return body.parse::<i64>().map(Bound::Absolute).map_err(|_| bad());
    }
    let (num, scale) = if let Some(n) = body.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = body.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = body.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = body.strip_suffix('s') {
        (n, 1e9)
    } else {
        (body, 1e9)
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 || num.trim().starts_with(['+', '-']) {
        return Err(format!("invalid time {s:?}: a time after the trace start cannot be negative"));
    }
    let ns = v * scale;
    if ns > i64::MAX as f64 / 2.0 {
        return Err(bad());
    }
    Ok(Bound::Relative(ns.round() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("2.5"), Ok(Bound::Relative(2_500_000_000)));
        assert_eq!(parse_time("+2.5s"), Ok(Bound::Relative(2_500_000_000)));
        assert_eq!(parse_time("1500ms"), Ok(Bound::Relative(1_500_000_000)));
        assert_eq!(parse_time("20us"), Ok(Bound::Relative(20_000)));
        assert_eq!(parse_time("1633891126851470196"), Ok(Bound::Absolute(1_633_891_126_851_470_196)));
        assert_eq!(parse_time("2021-10-06T12:00:00Z"), Ok(Bound::Absolute(1_633_521_600_000_000_000)));
        assert_eq!(parse_time("2021-10-06T12:00:00.25Z"), Ok(Bound::Absolute(1_633_521_600_250_000_000)));
        assert_eq!(parse_time("2021-10-06T14:00:00+02:00"), Ok(Bound::Absolute(1_633_521_600_000_000_000)));
        assert_eq!(parse_time("2021-10-06T14:00:00+0200"), Ok(Bound::Absolute(1_633_521_600_000_000_000)));
        assert_eq!(parse_time("2021-10-06T10:30:00-01:30"), Ok(Bound::Absolute(1_633_521_600_000_000_000)));
        assert_eq!(parse_time("2021-10-06T14:00:00+02"), Ok(Bound::Absolute(1_633_521_600_000_000_000)));
        assert_eq!(parse_time("2020-02-29T00:00:00Z"), Ok(Bound::Absolute(1_582_934_400_000_000_000)));
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Ok(Bound::Absolute(0)));
        for bad in [
            "",
            "abc",
            "-1",
            "+-1",
            "2021-10-06T25:00:00Z",
            "2021-02-30xT1",
            "2021-02-30T00:00:00Z",
            "2021-02-29T00:00:00Z",
            "2021-04-31T00:00:00Z",
            "2021-10-06T14:00:00+24:00",
            "2021-10-06T14:00:00+02:60",
            "2021-10-06T14:00:00+200",
            "2021-10-06T14:00:00+0a",
            "1e400",
            "nan",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }
}
