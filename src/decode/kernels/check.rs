//! The Snappy check kernel's results (`cuda/check.cu`): the codes it
//! writes, and the host's [`CompressedError`] they stand for, so a page the
//! GPU refuses reads exactly as one the host check refuses.

use crate::decode::page::validate::CompressedError;

/// Threads per block of `gds_check_snappy` (a warp per Snappy page).
pub const CHECK_BLOCK: u32 = 128;
/// 32-bit words per job of the check's results: `[code, at, a, b]`.
pub const CHECK_WORDS: u32 = 4;

/// What `gds_check_snappy` found in one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SnappyCheck {
    /// The stream is sound.
    Ok = 0,
    /// It ends inside an element (`at`).
    Truncated = 1,
    /// Its preamble declares another size (`a`, `b`: low and high words).
    LengthMismatch = 2,
    /// A copy reaches before the output's start (`at`, offset `a`, produced `b`).
    BadOffset = 3,
    /// An element writes past the declared size (`at`, size `a`).
    Overrun = 4,
    /// It produces fewer bytes than declared (produced `a`, size `b`).
    Short = 5,
}

impl SnappyCheck {
    /// Every code, for the generated header.
    pub const ALL: [SnappyCheck; 6] = [
        SnappyCheck::Ok,
        SnappyCheck::Truncated,
        SnappyCheck::LengthMismatch,
        SnappyCheck::BadOffset,
        SnappyCheck::Overrun,
        SnappyCheck::Short,
    ];

    /// The C name of the code (`GDS_SNAPPY_...`).
    pub fn c_name(self) -> &'static str {
        match self {
            SnappyCheck::Ok => "GDS_SNAPPY_OK",
            SnappyCheck::Truncated => "GDS_SNAPPY_TRUNCATED",
            SnappyCheck::LengthMismatch => "GDS_SNAPPY_LENGTH_MISMATCH",
            SnappyCheck::BadOffset => "GDS_SNAPPY_BAD_OFFSET",
            SnappyCheck::Overrun => "GDS_SNAPPY_OVERRUN",
            SnappyCheck::Short => "GDS_SNAPPY_SHORT",
        }
    }
}

/// The error one job's result words stand for (`None` for a sound page);
/// `size` is the page header's uncompressed size. An unknown code is
/// reported as a truncation at the position given.
pub fn snappy_check_error(words: [u32; 4], size: usize) -> Option<CompressedError> {
    let [code, at, a, b] = words;
    let at = at as usize;
    Some(match code {
        0 => return None,
        2 => CompressedError::LengthMismatch {
            stream: u64::from(a) | (u64::from(b) << 32),
            header: size,
        },
        3 => CompressedError::BadOffset {
            at,
            offset: a as usize,
            produced: b as usize,
        },
        4 => CompressedError::Overrun { at, size },
        5 => CompressedError::Short {
            produced: a as usize,
            size,
        },
        _ => CompressedError::Truncated { at },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_the_host_errors() {
        assert_eq!(snappy_check_error([0, 9, 9, 9], 10), None);
        assert_eq!(
            snappy_check_error([1, 7, 0, 0], 10),
            Some(CompressedError::Truncated { at: 7 })
        );
        assert_eq!(
            snappy_check_error([2, 0, 5, 1], 10),
            Some(CompressedError::LengthMismatch {
                stream: (1 << 32) | 5,
                header: 10
            })
        );
        assert_eq!(
            snappy_check_error([3, 4, 9, 2], 10),
            Some(CompressedError::BadOffset {
                at: 4,
                offset: 9,
                produced: 2
            })
        );
        assert_eq!(
            snappy_check_error([4, 3, 10, 0], 10),
            Some(CompressedError::Overrun { at: 3, size: 10 })
        );
        assert_eq!(
            snappy_check_error([5, 0, 6, 10], 10),
            Some(CompressedError::Short {
                produced: 6,
                size: 10
            })
        );
        for (i, c) in SnappyCheck::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert!(c.c_name().starts_with("GDS_SNAPPY_"));
        }
    }
}
