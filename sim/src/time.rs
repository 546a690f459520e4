//! Virtual time: integer nanoseconds, never floating point, never the wall clock.
//!
//! [`Instant`] is a point on the simulated clock (nanoseconds since the run started) and
//! [`Duration`] a span between two points. Both are plain `u64` newtypes so that arithmetic is
//! exact and a run is reproducible bit for bit. Both print in the human form the scenario files
//! use (`12.345ms`), and [`Duration::parse`] reads that form back exactly.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Duration(u64);

/// A point on the simulated clock: nanoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct Instant(u64);

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn saturating_add(self, other: Duration) -> Duration {
        Duration(self.0.saturating_add(other.0))
    }
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
    pub fn checked_mul(self, factor: u64) -> Option<Duration> {
        self.0.checked_mul(factor).map(Duration)
    }

    /// Parses the human form used in scenario files: a non-negative decimal number followed by
    /// a unit, `ns`, `us` (or `µs`), `ms` or `s`; for example `"250us"`, `"1.5ms"`, `"2s"`.
    /// `"0"` alone is accepted. The value must be a whole number of nanoseconds and fit in 64
    /// bits. The parse is exact: no floating point is involved.
    pub fn parse(text: &str) -> Result<Duration, ParseDurationError> {
        let err = |reason: &'static str| ParseDurationError {
            text: text.to_owned(),
            reason,
        };
        let s = text.trim();
        if s == "0" {
            return Ok(Duration::ZERO);
        }
        let split = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| err("a unit is missing (use ns, us, ms or s)"))?;
        let (number, unit) = s.split_at(split);
        let scale: u64 = match unit {
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            _ => return Err(err("unknown unit (use ns, us, ms or s)")),
        };
        let (whole, frac) = match number.split_once('.') {
            Some((w, f)) => (w, f),
            None => (number, ""),
        };
        if whole.is_empty() && frac.is_empty() {
            return Err(err("a number is missing before the unit"));
        }
        if frac.contains('.') {
            return Err(err("the number has more than one decimal point"));
        }
        let overflow = || err("the duration does not fit in 64 bits of nanoseconds");
        let whole_value: u64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| overflow())?
        };
        let mut nanos = whole_value.checked_mul(scale).ok_or_else(overflow)?;
        let mut place = scale;
        for digit in frac.bytes() {
            if place % 10 != 0 {
                return Err(err("more decimals than whole nanoseconds"));
            }
            place /= 10;
            nanos = nanos
                .checked_add(u64::from(digit - b'0') * place)
                .ok_or_else(overflow)?;
        }
        Ok(Duration(nanos))
    }
}

impl Instant {
    pub const ZERO: Instant = Instant(0);
    pub const MAX: Instant = Instant(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Instant {
        Instant(ns)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Time elapsed since the start of the run.
    pub const fn since_start(self) -> Duration {
        Duration(self.0)
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at the end of time (a deadline that can never be reached).
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(
            self.0
                .checked_add(d.0)
                .expect("simulated time overflowed u64 nanoseconds"),
        )
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        Duration(
            self.0
                .checked_sub(earlier.0)
                .expect("subtracted a later instant from an earlier one"),
        )
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, other: Duration) -> Duration {
        Duration(
            self.0
                .checked_add(other.0)
                .expect("duration overflowed u64 nanoseconds"),
        )
    }
}

/// Writes `nanos` in the largest unit that keeps the integer part non-zero, with every
/// significant decimal and no trailing zeros: `0ns`, `999ns`, `1.5us`, `12.345ms`, `2s`.
fn write_nanos(f: &mut fmt::Formatter<'_>, nanos: u64) -> fmt::Result {
    let (scale, unit) = match nanos {
        0..=999 => return write!(f, "{nanos}ns"),
        1_000..=999_999 => (1_000, "us"),
        1_000_000..=999_999_999 => (1_000_000, "ms"),
        _ => (1_000_000_000, "s"),
    };
    let whole = nanos / scale;
    let frac = nanos % scale;
    if frac == 0 {
        return write!(f, "{whole}{unit}");
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{frac:0width$}");
    write!(f, "{whole}.{}{unit}", digits.trim_end_matches('0'))
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_nanos(f, self.0)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_nanos(f, self.0)
    }
}

/// A duration string that [`Duration::parse`] could not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDurationError {
    pub text: String,
    pub reason: &'static str,
}

impl fmt::Display for ParseDurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a duration: {}", self.text, self.reason)
    }
}

impl std::error::Error for ParseDurationError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_in_the_largest_unit_with_exact_decimals() {
        let cases = [
            (0, "0ns"),
            (999, "999ns"),
            (1_000, "1us"),
            (1_500, "1.5us"),
            (12_345_000, "12.345ms"),
            (10_000_000, "10ms"),
            (2_000_000_000, "2s"),
            (1_000_000_001, "1.000000001s"),
        ];
        for (nanos, text) in cases {
            assert_eq!(Duration::from_nanos(nanos).to_string(), text);
            assert_eq!(Instant::from_nanos(nanos).to_string(), text);
        }
    }

    #[test]
    fn parses_every_unit_and_round_trips() {
        assert_eq!(Duration::parse("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(Duration::parse("250µs"), Ok(Duration::from_micros(250)));
        assert_eq!(Duration::parse("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(Duration::parse("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(Duration::parse("7ns"), Ok(Duration::from_nanos(7)));
        assert_eq!(Duration::parse("1.5ms"), Ok(Duration::from_micros(1_500)));
        assert_eq!(Duration::parse(".5s"), Ok(Duration::from_millis(500)));
        assert_eq!(Duration::parse("0"), Ok(Duration::ZERO));
        for nanos in [
            0,
            1,
            999,
            1_000,
            1_234_567,
            10_000_000,
            1_000_000_001,
            u64::MAX,
        ] {
            let d = Duration::from_nanos(nanos);
            assert_eq!(Duration::parse(&d.to_string()), Ok(d), "{d}");
        }
    }

    #[test]
    fn rejects_malformed_durations_with_a_reason() {
        for bad in [
            "",
            "10",
            "ms",
            "-1ms",
            "1.2.3ms",
            "1.5ns",
            "10 lightyears",
            "1h",
            "99999999999s",
        ] {
            let e = Duration::parse(bad).expect_err(bad);
            assert!(!e.reason.is_empty());
        }
    }

    #[test]
    fn instant_arithmetic_is_exact() {
        let t = Instant::ZERO + Duration::from_millis(3);
        assert_eq!(t - Instant::from_nanos(1_000_000), Duration::from_millis(2));
        assert_eq!(
            Instant::MAX.saturating_add(Duration::from_secs(1)),
            Instant::MAX
        );
        assert_eq!(Instant::ZERO.saturating_duration_since(t), Duration::ZERO);
    }
}
