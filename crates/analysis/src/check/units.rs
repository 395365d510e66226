//! Values of an expectation file: durations with their unit, frequencies, fractions and
//! counts, read and written; and the rounding of suggested limits.

use serde::Serialize;

/// The unit of a measured value and of its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Nanoseconds (written with a unit in the file: `ns`, `us`, `ms`, `s`).
    Ns,
    /// Hertz (messages per second).
    Hz,
    /// A fraction (`0.25` or `25%` in the file).
    Ratio,
    /// A count.
    Count,
}

/// Duration units, longest suffix first so that `ms` is not read as `m` + `s`.
const DURATION_UNITS: [(&str, f64); 5] = [("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];

/// A number as written (`12`, `1.5`, `-3`, `2e3`).
fn number(s: &str) -> Option<f64> {
    let s = s.trim();
    let ok = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    ok.then(|| s.parse::<f64>().ok()).flatten().filter(|v| v.is_finite())
}

/// A value of `unit` as written in the file: a duration with its unit (`250us`, `1.5 ms`), a
/// frequency (`10`, `10 Hz`), a fraction (`0.25`, `25%`), a count (`3`).
pub fn parse(s: &str, unit: Unit) -> Result<f64, String> {
    let s = s.trim();
    match unit {
        Unit::Ns => {
            let (n, scale) = DURATION_UNITS
                .iter()
                .find_map(|(u, k)| s.strip_suffix(u).map(|n| (n, *k)))
                .ok_or_else(|| format!("{s:?} is not a duration: write its unit (ns, us, ms or s), as in 250us"))?;
            let v = number(n).ok_or_else(|| format!("{s:?} is not a duration (as in 250us, 1.5ms)"))?;
            Ok((v * scale).round())
        }
        Unit::Hz => {
            let n = s.strip_suffix("Hz").unwrap_or(s);
            number(n).filter(|v| *v >= 0.0).ok_or_else(|| format!("{s:?} is not a frequency (as in 10 or 10 Hz)"))
        }
        Unit::Ratio => {
            let (n, scale) = match s.strip_suffix('%') {
                Some(n) => (n, 0.01),
                None => (s, 1.0),
            };
            number(n)
                .map(|v| v * scale)
                .filter(|v| *v >= 0.0)
                .ok_or_else(|| format!("{s:?} is not a fraction (as in 0.25 or 25%)"))
        }
        Unit::Count => {
            s.parse::<u64>().map(|v| v as f64).map_err(|_| format!("{s:?} is not a count (a whole number, 0 or more)"))
        }
    }
}

/// A number in its shortest form that reads back as the same `f64`.
fn short(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        format!("{v}")
    }
}

/// A duration in the file's form, in the largest unit it is at least one of (`1.9ms`).
pub fn duration(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    let (u, k) = if a >= 1e9 {
        ("s", 1e9)
    } else if a >= 1e6 {
        ("ms", 1e6)
    } else if a >= 1e3 {
        ("us", 1e3)
    } else {
        ("ns", 1.0)
    };
    format!("{}{u}", short(ns as f64 / k))
}

/// A value of `unit` in the file's form, which [`parse`] reads back.
pub fn write(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Ns => duration(v.round() as i64),
        Unit::Hz | Unit::Ratio => short(v),
        Unit::Count => format!("{}", v.round() as i64),
    }
}

/// A duration for people, in the largest unit it is at least one of, with a precision that suits
/// it: `850 ns`, `12.5 us`, `1.23 ms`, `2.500 s`.
pub fn human_duration(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// A value of `unit` for people: `1.23 ms`, `10.5 Hz`, `12.5%`, `3`.
pub fn human(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Ns => human_duration(v),
        Unit::Hz => format!("{} Hz", write((v * 1000.0).round() / 1000.0, Unit::Hz)),
        Unit::Ratio => format!("{}%", write((v * 1e5).round() / 1e3, Unit::Hz)),
        Unit::Count => format!("{v:.0}"),
    }
}

/// `v` rounded to two significant digits, up (`up`) or down: a suggested limit that is a round
/// number and still on the passing side of the value it was made from.
pub fn round2(v: f64, up: bool) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let step = 10f64.powf(v.abs().log10().floor() - 1.0);
    let q = v / step;
    // The quotient of a value already round comes out a hair above or below a whole number.
    let q = if (q - q.round()).abs() < 1e-9 { q.round() } else { q };
    let r = if up { q.ceil() } else { q.floor() };
    // Once more through the decimal form, so that the limit written is the limit compared.
    let s = format!("{:.1e}", r * step);
    s.parse().unwrap_or(r * step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_values() {
        assert_eq!(parse("250us", Unit::Ns), Ok(250_000.0));
        assert_eq!(parse("1.9ms", Unit::Ns), Ok(1_900_000.0));
        assert_eq!(parse(" 2 s", Unit::Ns), Ok(2e9));
        assert_eq!(parse("-5us", Unit::Ns), Ok(-5000.0));
        assert!(parse("5", Unit::Ns).unwrap_err().contains("write its unit"));
        assert!(parse("fast", Unit::Ns).is_err());
        assert_eq!(parse("10 Hz", Unit::Hz), Ok(10.0));
        assert_eq!(parse("25%", Unit::Ratio), Ok(0.25));
        assert_eq!(parse("3", Unit::Count), Ok(3.0));
        assert!(parse("-1", Unit::Count).is_err());
        for ns in [0, 999, 1_900_000, 100_000_000, 1_500_000_000, 12_345] {
            assert_eq!(parse(&duration(ns), Unit::Ns), Ok(ns as f64), "{ns}");
        }
        assert_eq!(duration(1_900_000), "1.9ms");
        assert_eq!(write(0.013, Unit::Ratio), "0.013");
    }

    #[test]
    fn rounds_to_two_digits_on_the_passing_side() {
        assert_eq!(round2(1_851_850.0, true), 1_900_000.0);
        assert_eq!(round2(1_851_850.0, false), 1_800_000.0);
        assert_eq!(round2(1_800_000.0, true), 1_800_000.0);
        assert_eq!(round2(0.0123, true), 0.013);
        assert_eq!(round2(7.0, true), 7.0);
        assert_eq!(round2(0.0, true), 0.0);
        for v in [0.1 * 3.0, 123.456, 9.99, 0.07] {
            // Within the snap of a quotient that is already whole.
            assert!(round2(v, true) >= v * (1.0 - 1e-9) && round2(v, false) <= v * (1.0 + 1e-9), "{v}");
        }
    }
}
