//! Dates and timestamps: their text and their days or nanoseconds since
//! the epoch.

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian (year, month, day) of days since 1970-01-01.
pub(super) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Parses `YYYY-MM-DD` into days since 1970-01-01.
pub(super) fn parse_date(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = &s[r];
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if d < 1 || d > month_days {
        return None;
    }
    i32::try_from(days_from_civil(y, m, d)).ok()
}

/// Nanoseconds a day.
pub(super) const DAY_NANOS: i128 = 86_400_000_000_000;

/// Parses `YYYY-MM-DD HH:MM:SS[.f]` (or with `T` between date and time; one
/// to nine fraction digits) into nanoseconds since 1970-01-01 00:00:00.
pub(super) fn parse_timestamp(s: &str) -> Option<i128> {
    let (date, time) = (s.get(..10)?, s.get(10..)?);
    let days = parse_date(date)?;
    let time = time.strip_prefix(' ').or_else(|| time.strip_prefix('T'))?;
    let (hms, frac) = match time.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (time, None),
    };
    let b = hms.as_bytes();
    if b.len() != 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i128> {
        let part = hms.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (h, m, sec) = (num(0..2)?, num(3..5)?, num(6..8)?);
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let nanos = match frac {
        None => 0,
        Some(f) if (1..=9).contains(&f.len()) && f.bytes().all(|c| c.is_ascii_digit()) => {
            format!("{f:0<9}").parse::<i128>().ok()?
        }
        Some(_) => return None,
    };
    Some(i128::from(days) * DAY_NANOS + ((h * 60 + m) * 60 + sec) * 1_000_000_000 + nanos)
}

/// The text of a timestamp literal (fraction digits only where needed).
pub(super) fn fmt_timestamp(nanos: i128) -> String {
    let days = nanos.div_euclid(DAY_NANOS);
    let in_day = nanos.rem_euclid(DAY_NANOS);
    let (y, mo, d) = civil_from_days(i64::try_from(days).unwrap_or(i64::MAX));
    let secs = in_day / 1_000_000_000;
    let frac = in_day % 1_000_000_000;
    let (h, mi, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut out = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    if frac != 0 {
        let digits = format!("{frac:09}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    out
}
