//! The configuration layer's errors: a setting that cannot be accepted, a
//! human-readable size that does not parse.

/// A configuration value that could not be accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A value that does not parse or is out of range, e.g. `invalid value
    /// "abc" for KVIKIO_TASK_SIZE: expected a positive integer number of
    /// bytes`. `name` is the environment variable, or the [`Settings`](super::Settings) field
    /// when the value came from a [`SettingsBuilder`](super::SettingsBuilder).
    #[error("invalid value {value:?} for {name}: {reason}")]
    Invalid {
        /// The environment variable or settings field the value was for.
        name: String,
        /// The rejected value, as given.
        value: String,
        /// What was expected instead.
        reason: String,
    },
    /// Two variables that mean the same setting are set to different values,
    /// e.g. `KVIKIO_NTHREADS=4` and `KVIKIO_NUM_THREADS=8`.
    #[error(
        "conflicting settings: {first}={first_value:?} but {second}={second_value:?}; \
         unset one of them or give both the same value"
    )]
    Conflict {
        /// The first variable's name.
        first: String,
        /// The first variable's value, as given.
        first_value: String,
        /// The second variable's name.
        second: String,
        /// The second variable's value, as given.
        second_value: String,
    },
    /// A size setting whose text does not parse as a size.
    #[error("invalid value for {name}: {source}")]
    Size {
        /// The environment variable or settings field the value was for.
        name: String,
        /// Why the text is not a size.
        #[source]
        source: SizeError,
    },
}

/// Why a human-readable size ([`parse_size`](super::parse_size)) does not
/// parse.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizeError {
    /// Empty text (or only whitespace).
    #[error("empty size: expected a number of bytes such as 4096 or 16MiB")]
    Empty,
    /// The text does not start with digits (a sign, a unit alone).
    #[error(
        "invalid size {text:?}: expected a non-negative integer optionally followed by a unit (K, M, G, T)"
    )]
    NotANumber {
        /// The text as given.
        text: String,
    },
    /// A fraction, e.g. `1.5M`.
    #[error("invalid size {text:?}: fractional sizes are not supported; use a smaller unit")]
    Fractional {
        /// The text as given.
        text: String,
    },
    /// A unit that is not B, K, M, G or T (optionally with B or iB).
    #[error(
        "invalid size {text:?}: unknown unit {unit:?} (expected B, K, M, G or T, optionally with B or iB)"
    )]
    UnknownUnit {
        /// The text as given.
        text: String,
        /// The unit as given.
        unit: String,
    },
    /// More than `u64::MAX` bytes.
    #[error("invalid size {text:?}: too large (more than {max} bytes)", max = u64::MAX)]
    TooLarge {
        /// The text as given.
        text: String,
    },
}
