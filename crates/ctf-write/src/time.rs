//! Calendar time (UTC) of ns since the Unix epoch: for naming traces (the tracer) and printing
//! timestamps (the reader).

/// A UTC date and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    /// Year.
    pub year: i64,
    /// Month, 1 to 12.
    pub month: u32,
    /// Day, 1 to 31.
    pub day: u32,
    /// Hour.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
    /// Nanoseconds.
    pub nanos: u32,
}

/// The UTC calendar time of `ns` since the Unix epoch (Howard Hinnant's civil-from-days).
pub fn utc(ns: i64) -> Utc {
    let s = ns.div_euclid(1_000_000_000);
    let days = s.div_euclid(86_400);
    let t = s.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    Utc {
        year,
        month,
        day,
        hour: (t / 3600) as u32,
        minute: ((t / 60) % 60) as u32,
        second: (t % 60) as u32,
        nanos: ns.rem_euclid(1_000_000_000) as u32,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of [`utc`]'s date).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_from_civil_inverts_utc() {
        for days in [-100_000i64, -1, 0, 1, 11_016, 19_296, 100_000] {
            let t = utc(days * 86_400 * 1_000_000_000);
            assert_eq!(days_from_civil(t.year, t.month as i64, t.day as i64), days);
        }
    }

    #[test]
    fn known_dates() {
        assert_eq!(utc(0), Utc { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0, nanos: 0 });
        let t = utc(1_667_230_555_877_347_705);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second, t.nanos),
            (2022, 10, 31, 15, 35, 55, 877_347_705)
        );
        let t = utc(951_782_400 * 1_000_000_000); // 2000-02-29
        assert_eq!((t.year, t.month, t.day), (2000, 2, 29));
    }
}
