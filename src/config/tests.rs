//! Tests of the settings: defaults, parsing, aliases, errors, the builder.

use super::*;
use std::collections::HashMap;

/// Runs [`Settings::from_lookup`] over the given variable/value pairs.
fn settings_with(vars: &[(&str, &str)]) -> Result<Settings, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Settings::from_lookup(|name| map.get(name).cloned())
}

/// Asserts that setting `name` to `value` fails with `Invalid` naming it.
fn assert_invalid(name: &str, value: &str) {
    match settings_with(&[(name, value)]) {
        Err(ConfigError::Invalid {
            name: got_name,
            value: got_value,
            reason,
        }) => {
            assert_eq!(got_name, name, "value {value:?}");
            assert_eq!(got_value, value);
            assert!(!reason.is_empty());
        }
        other => panic!("{name}={value:?} gave {other:?}, expected Invalid"),
    }
}

#[test]
fn defaults_without_environment() {
    let s = settings_with(&[]).unwrap();
    assert_eq!(s, Settings::default());
    assert_eq!(s.compat_mode, CompatMode::Auto);
    assert_eq!(s.num_threads, Settings::default_num_threads());
    assert_eq!(s.task_size, 4 * 1024 * 1024);
    assert_eq!(s.gds_threshold, 16 * 1024);
    assert_eq!(s.bounce_buffer_size, 16 * 1024 * 1024);
    assert!(!s.auto_direct_io_read);
    assert!(s.auto_direct_io_write);
    assert_eq!(s.device_read_path, DeviceReadPath::Auto);
    assert_eq!(CompatMode::default(), CompatMode::Auto);
    assert_eq!(DeviceReadPath::default(), DeviceReadPath::Auto);
}

#[test]
fn default_num_threads_follows_rule() {
    let n = Settings::default_num_threads();
    assert!((8..=16).contains(&n), "{n}");
    let expected = std::thread::available_parallelism()
        .map(|p| p.get().saturating_sub(4))
        .unwrap_or(8)
        .clamp(8, 16);
    assert_eq!(n, expected);
    // Four cores left to the consumer, within 8..=16.
    for (cores, threads) in [(1, 8), (2, 8), (12, 8), (16, 12), (20, 16), (128, 16)] {
        assert_eq!(
            super::threads_for_cores(Some(cores)),
            threads,
            "{cores} cores"
        );
    }
    assert_eq!(super::threads_for_cores(None), 8);
}

#[test]
fn parses_every_variable() {
    let s = settings_with(&[
        ("KVIKIO_COMPAT_MODE", "on"),
        ("KVIKIO_NTHREADS", "7"),
        ("KVIKIO_TASK_SIZE", "1048576"),
        ("KVIKIO_GDS_THRESHOLD", "0"),
        ("KVIKIO_BOUNCE_BUFFER_SIZE", " 8388608 "),
        ("KVIKIO_AUTO_DIRECT_IO_READ", "true"),
        ("KVIKIO_AUTO_DIRECT_IO_WRITE", "no"),
        ("GDSCAN_DEVICE_READ_PATH", "MMAP"),
    ])
    .unwrap();
    assert_eq!(
        s,
        Settings {
            compat_mode: CompatMode::On,
            num_threads: 7,
            task_size: 1_048_576,
            gds_threshold: 0,
            bounce_buffer_size: 8_388_608,
            auto_direct_io_read: true,
            auto_direct_io_write: false,
            device_read_path: DeviceReadPath::Mmap,
            cufile: Default::default(),
        }
    );
}

#[test]
fn parses_each_variable_alone() {
    let d = Settings::default();
    assert_eq!(
        settings_with(&[("KVIKIO_TASK_SIZE", "65536")])
            .unwrap()
            .task_size,
        65536
    );
    assert_eq!(
        settings_with(&[("KVIKIO_GDS_THRESHOLD", "1048576")])
            .unwrap()
            .gds_threshold,
        1_048_576
    );
    assert_eq!(
        settings_with(&[("KVIKIO_BOUNCE_BUFFER_SIZE", "1")])
            .unwrap()
            .bounce_buffer_size,
        1
    );
    assert_eq!(
        settings_with(&[("KVIKIO_NTHREADS", "\t12\n")])
            .unwrap()
            .num_threads,
        12
    );
    assert_eq!(
        settings_with(&[("KVIKIO_NTHREADS", "4096")])
            .unwrap()
            .num_threads,
        4096
    );
    assert_eq!(
        settings_with(&[("GDSCAN_DEVICE_READ_PATH", "bounce")])
            .unwrap()
            .device_read_path,
        DeviceReadPath::Bounce
    );
    assert_eq!(
        settings_with(&[("GDSCAN_DEVICE_READ_PATH", "Auto")])
            .unwrap()
            .device_read_path,
        DeviceReadPath::Auto
    );
    // A single variable leaves every other field at its default.
    let s = settings_with(&[("KVIKIO_AUTO_DIRECT_IO_READ", "1")]).unwrap();
    assert_eq!(
        s,
        Settings {
            auto_direct_io_read: true,
            ..d
        }
    );
}

#[test]
fn booleans_accept_every_spelling() {
    for (text, expected) in [
        ("true", true),
        ("TRUE", true),
        ("Yes", true),
        ("on", true),
        ("ON", true),
        ("1", true),
        (" true ", true),
        ("false", false),
        ("False", false),
        ("no", false),
        ("NO", false),
        ("off", false),
        ("Off", false),
        ("0", false),
    ] {
        let read = settings_with(&[("KVIKIO_AUTO_DIRECT_IO_READ", text)]).unwrap();
        assert_eq!(read.auto_direct_io_read, expected, "{text:?}");
        let write = settings_with(&[("KVIKIO_AUTO_DIRECT_IO_WRITE", text)]).unwrap();
        assert_eq!(write.auto_direct_io_write, expected, "{text:?}");
    }
}

#[test]
fn compat_mode_aliases() {
    for (text, expected) in [
        ("on", CompatMode::On),
        ("ON", CompatMode::On),
        ("true", CompatMode::On),
        ("Yes", CompatMode::On),
        ("1", CompatMode::On),
        ("off", CompatMode::Off),
        ("OFF", CompatMode::Off),
        ("False", CompatMode::Off),
        ("no", CompatMode::Off),
        ("0", CompatMode::Off),
        ("auto", CompatMode::Auto),
        ("AUTO", CompatMode::Auto),
        ("Auto", CompatMode::Auto),
    ] {
        let s = settings_with(&[("KVIKIO_COMPAT_MODE", text)]).unwrap();
        assert_eq!(s.compat_mode, expected, "{text:?}");
        assert_eq!(text.parse::<CompatMode>().unwrap(), expected, "{text:?}");
    }
}

#[test]
fn nthreads_alias_and_agreement() {
    assert_eq!(
        settings_with(&[("KVIKIO_NUM_THREADS", "5")])
            .unwrap()
            .num_threads,
        5
    );
    assert_eq!(
        settings_with(&[("KVIKIO_NTHREADS", "6"), ("KVIKIO_NUM_THREADS", "6")])
            .unwrap()
            .num_threads,
        6
    );
    // Equal after trimming whitespace is still equal.
    assert_eq!(
        settings_with(&[("KVIKIO_NTHREADS", "3"), ("KVIKIO_NUM_THREADS", " 3")])
            .unwrap()
            .num_threads,
        3
    );
}

#[test]
fn nthreads_conflict() {
    let err = settings_with(&[("KVIKIO_NTHREADS", "4"), ("KVIKIO_NUM_THREADS", "8")]).unwrap_err();
    assert_eq!(
        err,
        ConfigError::Conflict {
            first: "KVIKIO_NTHREADS".to_owned(),
            first_value: "4".to_owned(),
            second: "KVIKIO_NUM_THREADS".to_owned(),
            second_value: "8".to_owned(),
        }
    );
    let message = err.to_string();
    assert!(message.contains("KVIKIO_NTHREADS=\"4\""), "{message}");
    assert!(message.contains("KVIKIO_NUM_THREADS=\"8\""), "{message}");
    // An invalid alias is reported as invalid, not as a conflict.
    let err = settings_with(&[("KVIKIO_NTHREADS", "4"), ("KVIKIO_NUM_THREADS", "x")]).unwrap_err();
    assert!(
        matches!(&err, ConfigError::Invalid { name, .. } if name == "KVIKIO_NUM_THREADS"),
        "{err:?}"
    );
}

#[test]
fn bad_integers_name_the_variable() {
    let overflow = "99999999999999999999999999";
    for name in [
        "KVIKIO_NTHREADS",
        "KVIKIO_NUM_THREADS",
        "KVIKIO_TASK_SIZE",
        "KVIKIO_GDS_THRESHOLD",
        "KVIKIO_BOUNCE_BUFFER_SIZE",
    ] {
        for value in ["abc", "", "   ", "-5", "1.5", "+5", "4k", "0x10", overflow] {
            assert_invalid(name, value);
        }
    }
}

#[test]
fn zero_rules() {
    for name in [
        "KVIKIO_NTHREADS",
        "KVIKIO_NUM_THREADS",
        "KVIKIO_TASK_SIZE",
        "KVIKIO_BOUNCE_BUFFER_SIZE",
    ] {
        assert_invalid(name, "0");
        assert_invalid(name, " 0 ");
    }
    assert_eq!(
        settings_with(&[("KVIKIO_GDS_THRESHOLD", "0")])
            .unwrap()
            .gds_threshold,
        0
    );
}

#[test]
fn too_many_threads_from_env() {
    assert_invalid("KVIKIO_NTHREADS", "4097");
    assert_invalid("KVIKIO_NUM_THREADS", "100000");
}

#[test]
fn bad_words_name_the_variable() {
    for value in ["maybe", "", " ", "2", "tru", "y"] {
        assert_invalid("KVIKIO_AUTO_DIRECT_IO_READ", value);
        assert_invalid("KVIKIO_AUTO_DIRECT_IO_WRITE", value);
    }
    for value in ["maybe", "", "automatic", "2"] {
        assert_invalid("KVIKIO_COMPAT_MODE", value);
    }
    for value in ["", "posix", "gds", "mapped"] {
        assert_invalid("GDSCAN_DEVICE_READ_PATH", value);
    }
}

#[test]
fn invalid_message_format() {
    let err = settings_with(&[("KVIKIO_TASK_SIZE", "abc")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value \"abc\" for KVIKIO_TASK_SIZE: expected a positive integer number of bytes"
    );
    let err = settings_with(&[("KVIKIO_GDS_THRESHOLD", "-1")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value \"-1\" for KVIKIO_GDS_THRESHOLD: expected a non-negative integer number of bytes"
    );
}

#[test]
fn builder_overrides() {
    let s = Settings::builder()
        .compat_mode(CompatMode::Off)
        .num_threads(3)
        .task_size(1024)
        .gds_threshold(0)
        .bounce_buffer_size(2048)
        .auto_direct_io_read(true)
        .auto_direct_io_write(false)
        .device_read_path(DeviceReadPath::Bounce)
        .build()
        .unwrap();
    assert_eq!(
        s,
        Settings {
            compat_mode: CompatMode::Off,
            num_threads: 3,
            task_size: 1024,
            gds_threshold: 0,
            bounce_buffer_size: 2048,
            auto_direct_io_read: true,
            auto_direct_io_write: false,
            device_read_path: DeviceReadPath::Bounce,
            cufile: Default::default(),
        }
    );
    assert_eq!(Settings::builder().build().unwrap(), Settings::default());
    let only_threads = Settings::builder().num_threads(4096).build().unwrap();
    assert_eq!(
        only_threads,
        Settings {
            num_threads: 4096,
            ..Settings::default()
        }
    );
}

#[test]
fn builder_validation_names_the_field() {
    let field_of = |result: Result<Settings, ConfigError>| match result {
        Err(ConfigError::Invalid { name, .. }) => name,
        other => panic!("expected Invalid, got {other:?}"),
    };
    assert_eq!(
        field_of(Settings::builder().num_threads(0).build()),
        "num_threads"
    );
    assert_eq!(
        field_of(Settings::builder().num_threads(4097).build()),
        "num_threads"
    );
    assert_eq!(
        field_of(Settings::builder().task_size(0).build()),
        "task_size"
    );
    assert_eq!(
        field_of(Settings::builder().bounce_buffer_size(0).build()),
        "bounce_buffer_size"
    );
    let err = Settings::builder().num_threads(5000).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value \"5000\" for num_threads: must be at most 4096"
    );
}

#[test]
fn builder_from_env_uses_process_environment() {
    // Reads (never writes) the process environment; whatever it holds,
    // the builder must agree with Settings::from_env.
    match (SettingsBuilder::from_env(), Settings::from_env()) {
        (Ok(builder), Ok(settings)) => assert_eq!(builder.build().unwrap(), settings),
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("builder {a:?} disagrees with settings {b:?}"),
    }
}

#[test]
fn display_from_str_round_trips() {
    for mode in [CompatMode::On, CompatMode::Off, CompatMode::Auto] {
        assert_eq!(mode.to_string().parse::<CompatMode>().unwrap(), mode);
    }
    assert_eq!(CompatMode::On.to_string(), "ON");
    assert_eq!(CompatMode::Off.to_string(), "OFF");
    assert_eq!(CompatMode::Auto.to_string(), "AUTO");
    for path in [
        DeviceReadPath::Auto,
        DeviceReadPath::Bounce,
        DeviceReadPath::Mmap,
    ] {
        assert_eq!(path.to_string().parse::<DeviceReadPath>().unwrap(), path);
        assert_eq!(
            path.to_string()
                .to_uppercase()
                .parse::<DeviceReadPath>()
                .unwrap(),
            path
        );
    }
    assert_eq!(DeviceReadPath::Auto.to_string(), "auto");
    assert_eq!(DeviceReadPath::Bounce.to_string(), "bounce");
    assert_eq!(DeviceReadPath::Mmap.to_string(), "mmap");
    assert!("sideways".parse::<DeviceReadPath>().is_err());
    assert!("sideways".parse::<CompatMode>().is_err());
}

#[test]
fn serializes_like_display() {
    let s = Settings::builder()
        .compat_mode(CompatMode::On)
        .device_read_path(DeviceReadPath::Mmap)
        .build()
        .unwrap();
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["compat_mode"], "ON");
    assert_eq!(json["device_read_path"], "mmap");
    assert_eq!(json["task_size"], 4 * 1024 * 1024);
    assert_eq!(json["auto_direct_io_write"], true);
}

#[test]
fn parse_size_accepts_units() {
    let k = 1024u64;
    for (text, expected) in [
        ("0", 0),
        ("4096", 4096),
        (" 4096 ", 4096),
        ("7B", 7),
        ("4k", 4 * k),
        ("4K", 4 * k),
        ("4KiB", 4 * k),
        ("4KB", 4 * k),
        ("4kib", 4 * k),
        ("4 KiB", 4 * k),
        ("16M", 16 * k * k),
        ("16MiB", 16 * k * k),
        ("16mb", 16 * k * k),
        ("4G", 4 * k * k * k),
        ("4GiB", 4 * k * k * k),
        ("1T", k * k * k * k),
        ("1TiB", k * k * k * k),
        ("0K", 0),
        ("18446744073709551615", u64::MAX),
        ("16777215T", 16_777_215 * k * k * k * k),
    ] {
        assert_eq!(parse_size(text), Ok(expected), "{text:?}");
    }
}

#[test]
fn parse_size_rejects_bad_text() {
    for text in [
        "",
        "   ",
        "-1",
        "-4K",
        "+4K",
        "1.5",
        "1.5M",
        "4X",
        "4KK",
        "4 Ki",
        "K",
        "MiB",
        "4 4",
        "16777216T",
        "18446744073709551616",
        "99999999999999999999999G",
    ] {
        let err = parse_size(text).unwrap_err();
        assert!(!err.to_string().is_empty(), "{text:?}");
    }
    let message = |text| parse_size(text).unwrap_err().to_string();
    assert!(matches!(
        parse_size("1.5M"),
        Err(SizeError::Fractional { .. })
    ));
    assert!(message("1.5M").contains("fractional"));
    assert!(matches!(
        parse_size("4X"),
        Err(SizeError::UnknownUnit { unit, .. }) if unit == "X"
    ));
    assert!(message("4X").contains("unknown unit"));
    assert!(matches!(
        parse_size("16777216T"),
        Err(SizeError::TooLarge { .. })
    ));
    assert!(message("16777216T").contains("too large"));
    assert_eq!(parse_size(""), Err(SizeError::Empty));
    assert!(message("").contains("empty"));
}

/// The `GDSCAN_*` and `KVIKIO_*` names in `text`, outside comments and
/// tests (a name ending in `_` is a prefix, as `GDSCAN_CUFILE_<KEY>`).
fn variable_names(text: &str) -> std::collections::BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut names = std::collections::BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for prefix in ["GDSCAN_", "KVIKIO_"] {
            for (at, _) in line.match_indices(prefix) {
                let rest = &line[at..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(rest.len());
                names.insert(rest[..end].to_string());
            }
        }
    }
    names
}

#[test]
fn every_variable_from_env_reads_is_documented_and_every_documented_one_is_read() {
    let read: std::collections::BTreeSet<String> = [
        include_str!("mod.rs"),
        include_str!("cufile.rs"),
        include_str!("decode.rs"),
        include_str!("../store/options.rs"),
    ]
    .iter()
    .flat_map(|text| variable_names(text))
    .collect();
    let docs = include_str!("../../docs/settings.md");
    let documented_part = docs.split("## Where libraries are loaded").next().unwrap();
    let documented = variable_names(documented_part);
    let undocumented: Vec<_> = read.difference(&documented).collect();
    let unread: Vec<_> = documented.difference(&read).collect();
    assert!(
        undocumented.is_empty(),
        "read but not in docs/settings.md: {undocumented:?}"
    );
    assert!(
        unread.is_empty(),
        "in docs/settings.md but not read: {unread:?}"
    );
    for line in docs.lines() {
        assert!(
            line.chars().count() < 200,
            "docs/settings.md line over 200 characters: {line}"
        );
    }
}
