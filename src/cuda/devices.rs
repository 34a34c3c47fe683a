//! A set of GPUs to spread work over: `0,1`, `all`, or one ordinal.
//!
//! Parsing is pure; [`Devices::check`] validates against a device count
//! without touching the driver (so it is tested on machines without a
//! GPU), and [`Devices::open`] asks the driver for the count and opens
//! every device before the caller starts any I/O.

use super::device::Device;
use super::driver::device_count;
use super::error::{CudaError, Result};

/// Which GPUs a scan uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Devices {
    /// Every GPU the driver reports.
    All,
    /// These ordinals, in this order (no duplicates, at least one).
    List(Vec<usize>),
}

impl Default for Devices {
    fn default() -> Self {
        Devices::List(vec![0])
    }
}

/// A device list that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DevicesParseError {
    /// Nothing was given.
    #[error("an empty device list: give ordinals such as 0,1 or `all`")]
    Empty,
    /// An entry is not a device ordinal.
    #[error("{0:?} is not a device ordinal (expected e.g. 0,1 or `all`)")]
    NotAnOrdinal(String),
    /// An ordinal appears twice.
    #[error("device {0} is listed twice")]
    Duplicate(usize),
}

impl std::str::FromStr for Devices {
    type Err = DevicesParseError;

    fn from_str(s: &str) -> std::result::Result<Self, DevicesParseError> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("all") {
            return Ok(Devices::All);
        }
        if s.is_empty() {
            return Err(DevicesParseError::Empty);
        }
        let mut list = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            let n: usize = part
                .parse()
                .map_err(|_| DevicesParseError::NotAnOrdinal(part.to_string()))?;
            if list.contains(&n) {
                return Err(DevicesParseError::Duplicate(n));
            }
            list.push(n);
        }
        Ok(Devices::List(list))
    }
}

impl std::fmt::Display for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Devices::All => f.write_str("all"),
            Devices::List(l) => {
                let s: Vec<String> = l.iter().map(|d| d.to_string()).collect();
                f.write_str(&s.join(","))
            }
        }
    }
}

impl Devices {
    /// One device.
    pub fn one(ordinal: usize) -> Devices {
        Devices::List(vec![ordinal])
    }

    /// The ordinals this set names on a host with `count` devices, in order:
    /// every one must exist and there must be at least one (an ordinal
    /// listed twice counts once; parsing refuses it). Pure: no driver call.
    pub fn check(&self, count: usize) -> Result<Vec<usize>> {
        if count == 0 {
            return Err(CudaError::Unavailable(
                "the driver reports no CUDA devices".to_string(),
            ));
        }
        match self {
            Devices::All => Ok((0..count).collect()),
            Devices::List(list) => {
                if list.is_empty() {
                    return Err(CudaError::Unavailable("an empty device list".to_string()));
                }
                let mut seen = Vec::with_capacity(list.len());
                for &d in list {
                    if d >= count {
                        return Err(CudaError::NoSuchDevice { device: d, count });
                    }
                    if !seen.contains(&d) {
                        seen.push(d);
                    }
                }
                Ok(seen)
            }
        }
    }

    /// Opens every device of the set (the driver's count first, then each
    /// primary context), so that a bad ordinal fails before any I/O.
    pub fn open(&self) -> Result<Vec<Device>> {
        let ordinals = self.check(device_count()?)?;
        ordinals.into_iter().map(Device::get).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_all_and_refuses_nonsense() {
        assert_eq!("0,1".parse::<Devices>(), Ok(Devices::List(vec![0, 1])));
        assert_eq!(" 3 ".parse::<Devices>(), Ok(Devices::List(vec![3])));
        assert_eq!("ALL".parse::<Devices>(), Ok(Devices::All));
        assert_eq!("".parse::<Devices>(), Err(DevicesParseError::Empty));
        assert_eq!(
            "0,x".parse::<Devices>(),
            Err(DevicesParseError::NotAnOrdinal("x".into()))
        );
        assert_eq!(
            "1,1".parse::<Devices>(),
            Err(DevicesParseError::Duplicate(1))
        );
        assert_eq!(
            "-1".parse::<Devices>(),
            Err(DevicesParseError::NotAnOrdinal("-1".into()))
        );
        assert_eq!(Devices::List(vec![0, 1]).to_string(), "0,1");
    }

    #[test]
    fn checks_ordinals_against_the_device_count() {
        assert_eq!(Devices::All.check(2), Ok(vec![0, 1]));
        assert_eq!(Devices::List(vec![1, 0]).check(2), Ok(vec![1, 0]));
        assert_eq!(Devices::List(vec![1, 1, 0]).check(2), Ok(vec![1, 0]));
        assert_eq!(
            Devices::List(vec![0, 2]).check(2),
            Err(CudaError::NoSuchDevice {
                device: 2,
                count: 2
            })
        );
        assert!(matches!(
            Devices::All.check(0),
            Err(CudaError::Unavailable(_))
        ));
        assert!(matches!(
            Devices::List(vec![]).check(2),
            Err(CudaError::Unavailable(_))
        ));
    }
}
