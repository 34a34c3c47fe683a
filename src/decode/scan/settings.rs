//! The decoder's environment variables, checked before a scan reads
//! anything: a value outside a variable's choices is
//! [`DecodeError::Setting`] naming the variable, never a silent fallback to
//! the default (a typo in `GDSCAN_DECODE_CHECK` would otherwise run another
//! check than the one asked for). The readers of each variable stay where
//! the setting is used; this is their one list of what is valid.

use super::error::DecodeError;

/// A decoder variable and the values it takes.
struct Variable {
    name: &'static str,
    /// What is expected, as the error says it.
    expected: &'static str,
    accepts: Accepts,
}

/// The values a variable takes.
enum Accepts {
    /// Exactly one of these (the readers compare exactly).
    Exactly(&'static [&'static str]),
    /// Any value the function accepts.
    Check(fn(&str) -> bool),
}

impl Accepts {
    fn accepts(&self, v: &str) -> bool {
        match self {
            Accepts::Exactly(choices) => choices.contains(&v),
            Accepts::Check(f) => f(v),
        }
    }
}

/// Every variable the decoder reads, except `GDSCAN_DECODE_TRACE` (a path:
/// any value is one) and `GDSCAN_NVCOMP_LIBRARY` (a path, checked when
/// nvCOMP is loaded).
const VARIABLES: [Variable; 14] = [
    Variable {
        name: "GDSCAN_DECODE_CHECK",
        expected: "host, gpu, scan or off (any case)",
        accepts: Accepts::Check(|v| {
            v.parse::<super::compressed_check::CompressedCheck>()
                .is_ok()
        }),
    },
    Variable {
        name: "GDSCAN_CHECK_STREAM",
        expected: "own or upload",
        accepts: Accepts::Exactly(&["own", "upload"]),
    },
    Variable {
        name: "GDSCAN_DECODE_RAMP",
        expected: "0 or 1",
        accepts: Accepts::Exactly(&["0", "1"]),
    },
    Variable {
        name: "GDSCAN_DECODE_RAMP_DOWN",
        expected: "0 or 1",
        accepts: Accepts::Exactly(&["0", "1"]),
    },
    Variable {
        name: "GDSCAN_DECODE_STREAMS",
        expected: "a number of streams, at least 1",
        accepts: Accepts::Check(|v| v.parse::<usize>().is_ok_and(|n| n > 0)),
    },
    Variable {
        name: "GDSCAN_GPU_CHECK_MAX",
        expected: "a number of bytes",
        accepts: Accepts::Check(|v| v.parse::<usize>().is_ok()),
    },
    Variable {
        name: "GDSCAN_SNAPPY_SPLIT",
        expected: "0 (pages whole) or 1",
        accepts: Accepts::Exactly(&["0", "1"]),
    },
    Variable {
        name: "GDSCAN_STRING_WALK",
        expected: "serial or parallel",
        accepts: Accepts::Exactly(&["serial", "parallel"]),
    },
    Variable {
        name: "GDSCAN_STRING_WALKS",
        expected: "apart, together or spread",
        accepts: Accepts::Exactly(&["apart", "together", "spread"]),
    },
    Variable {
        name: "GDSCAN_CHECK_STREAMS",
        expected: "1 to 8",
        accepts: Accepts::Exactly(&["1", "2", "3", "4", "5", "6", "7", "8"]),
    },
    Variable {
        name: "GDSCAN_STAGE_THREADS",
        expected: "1 to 16",
        accepts: Accepts::Check(|v| v.parse::<usize>().is_ok_and(|n| (1..=16).contains(&n))),
    },
    Variable {
        name: "GDSCAN_SCAN_STARTS",
        expected: "1, 2, 3 or 4",
        accepts: Accepts::Exactly(&["1", "2", "3", "4"]),
    },
    Variable {
        name: "GDSCAN_STRING_CHUNK",
        expected: "16384 or 32768",
        accepts: Accepts::Exactly(&["16384", "32768"]),
    },
    Variable {
        name: "GDSCAN_DEVICE_POOL",
        expected: "scan or shared",
        accepts: Accepts::Exactly(&["scan", "shared"]),
    },
];

/// Checks the decoder's variables as `lookup` gives them (`None`: unset;
/// `Some(Err(raw))`: set but not UTF-8).
fn check_with(lookup: impl Fn(&str) -> Option<Result<String, String>>) -> Result<(), DecodeError> {
    for var in &VARIABLES {
        let value = match lookup(var.name) {
            None => continue,
            Some(Ok(v)) if var.accepts.accepts(&v) => continue,
            Some(Ok(v)) | Some(Err(v)) => v,
        };
        return Err(DecodeError::Setting {
            variable: var.name,
            value,
            expected: var.expected,
        });
    }
    Ok(())
}

/// Checks the decoder's variables in this process's environment
/// (docs/settings.md lists them and their values): the first one set to a
/// value outside its choices is [`DecodeError::Setting`]. Every decode
/// entry point calls it before it reads anything; a caller that opens its
/// files itself before [`super::decode`] may call it first, so that a
/// mistyped setting is found before any I/O.
///
/// ```
/// // In an environment where none is set (or each holds a valid value):
/// gdscan::decode::scan::check_settings().unwrap();
/// ```
pub fn check_settings() -> Result<(), DecodeError> {
    check_with(|name| {
        std::env::var_os(name).map(|v| v.into_string().map_err(|raw| format!("{raw:?}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn check(vars: &[(&str, &str)]) -> Result<(), DecodeError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        check_with(|name| map.get(name).cloned().map(Ok))
    }

    #[test]
    fn every_documented_value_is_accepted() {
        assert!(check(&[]).is_ok());
        for vars in [
            [
                ("GDSCAN_DECODE_CHECK", "scan"),
                ("GDSCAN_CHECK_STREAM", "upload"),
            ],
            [
                ("GDSCAN_DECODE_CHECK", "HOST"),
                ("GDSCAN_CHECK_STREAM", "own"),
            ],
            [
                ("GDSCAN_DECODE_STREAMS", "8"),
                ("GDSCAN_GPU_CHECK_MAX", "65536"),
            ],
            [("GDSCAN_SNAPPY_SPLIT", "0"), ("GDSCAN_DECODE_RAMP", "1")],
            [
                ("GDSCAN_STRING_WALK", "serial"),
                ("GDSCAN_STRING_WALKS", "together"),
            ],
            [
                ("GDSCAN_STRING_WALK", "parallel"),
                ("GDSCAN_STRING_WALKS", "spread"),
            ],
            [
                ("GDSCAN_STRING_CHUNK", "32768"),
                ("GDSCAN_DEVICE_POOL", "scan"),
            ],
            [("GDSCAN_CHECK_STREAMS", "8"), ("GDSCAN_SCAN_STARTS", "3")],
            [
                ("GDSCAN_STAGE_THREADS", "1"),
                ("GDSCAN_STAGE_THREADS", "16"),
            ],
        ] {
            assert!(check(&vars).is_ok(), "{vars:?}");
        }
    }

    #[test]
    fn a_value_outside_the_choices_names_the_variable() {
        for (name, bad) in [
            ("GDSCAN_DECODE_CHECK", "scna"),
            ("GDSCAN_CHECK_STREAM", "yes"),
            ("GDSCAN_DECODE_STREAMS", "0"),
            ("GDSCAN_DECODE_STREAMS", "eight"),
            ("GDSCAN_GPU_CHECK_MAX", "-1"),
            ("GDSCAN_STRING_CHUNK", "65536"),
            ("GDSCAN_STRING_WALKS", ""),
            ("GDSCAN_CHECK_STREAM", "UPLOAD"),
            ("GDSCAN_DECODE_RAMP", " 1"),
            ("GDSCAN_CHECK_STREAMS", "0"),
            ("GDSCAN_CHECK_STREAMS", "9"),
            ("GDSCAN_SCAN_STARTS", "5"),
            ("GDSCAN_STAGE_THREADS", "0"),
            ("GDSCAN_DECODE_RAMP_DOWN", "yes"),
            ("GDSCAN_STAGE_THREADS", "17"),
            ("GDSCAN_STRING_WALKS", "Spread"),
        ] {
            let err = check(&[(name, bad)]).unwrap_err();
            let DecodeError::Setting {
                variable, value, ..
            } = &err
            else {
                panic!("{name}={bad}: {err}");
            };
            assert_eq!((*variable, value.as_str()), (name, bad));
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn a_value_that_is_not_utf8_is_refused() {
        let err = check_with(|name| {
            (name == "GDSCAN_DECODE_CHECK").then(|| Err("\"sc\\xffan\"".to_string()))
        })
        .unwrap_err();
        assert!(matches!(
            err,
            DecodeError::Setting {
                variable: "GDSCAN_DECODE_CHECK",
                ..
            }
        ));
    }
}
