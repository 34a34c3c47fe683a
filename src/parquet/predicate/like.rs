//! SQL `LIKE` patterns: parsed into parts (bytes, `_`, `%`), matched
//! against a value's bytes on the host, and encoded for the GPU evaluator
//! (`filter_eval.cu` runs the same matcher).
//!
//! `%` matches any run of characters (none included), `_` exactly one
//! character (one UTF-8 code point of a string, one byte of a binary
//! value), and a backslash makes the `%`, `_` or backslash after it a
//! plain character, as in DataFusion's and arrow-rs's `LIKE`. A backslash
//! before anything else, or at the pattern's end, is refused: the engines
//! disagree on what it means.

use super::ast::Test;

/// One part of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LikePart {
    /// This byte.
    Byte(u8),
    /// `_`: one character.
    One,
    /// `%`: any run of characters.
    Any,
}

/// The parts of `pattern` (runs of `%` as one), or where and why it is not
/// a pattern this module takes.
pub(crate) fn like_parts(pattern: &str) -> Result<Vec<LikePart>, (usize, String)> {
    let mut parts = Vec::with_capacity(pattern.len());
    let mut chars = pattern.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '%' if parts.last() == Some(&LikePart::Any) => {}
            '%' => parts.push(LikePart::Any),
            '_' => parts.push(LikePart::One),
            '\\' => match chars.next() {
                Some((_, e @ ('%' | '_' | '\\'))) => parts.push(LikePart::Byte(e as u8)),
                Some((_, other)) => {
                    return Err((
                        at,
                        format!(
                            "'\\' escapes only '%', '_' and '\\' in a LIKE pattern, not {other:?}"
                        ),
                    ))
                }
                None => return Err((at, "a LIKE pattern cannot end with '\\'".to_string())),
            },
            c => {
                let mut buf = [0u8; 4];
                parts.extend(c.encode_utf8(&mut buf).bytes().map(LikePart::Byte));
            }
        }
    }
    Ok(parts)
}

/// The test `LIKE pattern` stands for: [`Test::StartsWith`] where the
/// pattern is plain characters and one trailing `%` (statistics prune on
/// it both ways), else [`Test::Like`]; or where and why the pattern is
/// refused.
pub(crate) fn like_test(pattern: &str) -> Result<Test, (usize, String)> {
    let parts = like_parts(pattern)?;
    match parts.split_last() {
        Some((LikePart::Any, head)) if head.iter().all(|p| matches!(p, LikePart::Byte(_))) => {
            let bytes: Vec<u8> = head
                .iter()
                .map(|p| match p {
                    LikePart::Byte(b) => *b,
                    _ => unreachable!("checked above"),
                })
                .collect();
            // Whole characters of a valid pattern: valid UTF-8.
            let prefix = String::from_utf8(bytes).expect("bytes of whole characters");
            Ok(Test::StartsWith(prefix))
        }
        _ => Ok(Test::Like(pattern.to_string())),
    }
}

/// The bytes every value matching `parts` starts with (those before the
/// first wildcard).
pub(crate) fn like_prefix_bytes(parts: &[LikePart]) -> Vec<u8> {
    parts
        .iter()
        .map_while(|p| match p {
            LikePart::Byte(b) => Some(*b),
            _ => None,
        })
        .collect()
}

/// `pattern` written back with its plain `%`, `_` and backslashes escaped:
/// the text [`like_parts`] reads as those bytes.
pub(crate) fn escape_like(plain: &str) -> String {
    let mut out = String::with_capacity(plain.len());
    for c in plain.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The GPU evaluator's form of `parts`: two bytes a part (0 and the byte,
/// 1 and 0 for `_`, 2 and 0 for `%`).
pub(crate) fn like_program(parts: &[LikePart]) -> Vec<u8> {
    parts
        .iter()
        .flat_map(|p| match p {
            LikePart::Byte(b) => [0, *b],
            LikePart::One => [1, 0],
            LikePart::Any => [2, 0],
        })
        .collect()
}

/// The bytes of the character that starts with `lead` (1 for a binary
/// value, or a byte that starts no UTF-8 sequence).
fn char_len(lead: u8, utf8: bool) -> usize {
    match lead {
        _ if !utf8 => 1,
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Where a match of `segment` (no `%` in it) starting at `value[at..]`
/// ends, if it matches there.
fn match_at(value: &[u8], mut at: usize, segment: &[LikePart], utf8: bool) -> Option<usize> {
    for part in segment {
        let &lead = value.get(at)?;
        match part {
            LikePart::Byte(b) if lead == *b => at += 1,
            LikePart::Byte(_) => return None,
            LikePart::One => at += char_len(lead, utf8),
            LikePart::Any => unreachable!("segments hold no '%'"),
        }
        if at > value.len() {
            return None;
        }
    }
    Some(at)
}

/// Whether a match may start at `value[at]`: a character's first byte.
fn starts_char(value: &[u8], at: usize, utf8: bool) -> bool {
    !utf8 || value.get(at).is_none_or(|b| b & 0xC0 != 0x80)
}

/// Whether `value` matches `parts` (`utf8`: `_` is one code point, else
/// one byte). The segments between `%`s are placed leftmost in turn: each
/// matches deterministically from a character's start, so the leftmost
/// placement leaves the most room for the rest.
pub(crate) fn like_matches(parts: &[LikePart], value: &[u8], utf8: bool) -> bool {
    let mut at = 0;
    let mut rest = parts;
    let mut anchored = true;
    loop {
        while let Some((LikePart::Any, tail)) = rest.split_first() {
            anchored = false;
            rest = tail;
        }
        if rest.is_empty() {
            return !anchored || at == value.len();
        }
        let len = rest
            .iter()
            .position(|p| *p == LikePart::Any)
            .unwrap_or(rest.len());
        let (segment, tail) = rest.split_at(len);
        let last = tail.is_empty();
        if anchored {
            match match_at(value, at, segment, utf8) {
                Some(end) if !last || end == value.len() => at = end,
                _ => return false,
            }
            if last {
                return true;
            }
        } else {
            let mut found = None;
            for start in at..value.len() {
                if !starts_char(value, start, utf8) {
                    continue;
                }
                match match_at(value, start, segment, utf8) {
                    Some(end) if !last || end == value.len() => {
                        found = Some(end);
                        break;
                    }
                    _ => {}
                }
            }
            match found {
                Some(end) if last => return end == value.len(),
                Some(end) => at = end,
                None => return false,
            }
        }
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(pattern: &str, value: &str) -> bool {
        like_matches(&like_parts(pattern).unwrap(), value.as_bytes(), true)
    }

    #[test]
    fn patterns_match_as_sql_says() {
        let cases = [
            ("%special%requests%", "x special y requests z", true),
            ("%special%requests%", "requests special", false),
            ("%BRASS", "LARGE BRASS", true),
            ("%BRASS", "BRASS PLATED", false),
            ("a_c", "abc", true),
            ("a_c", "ac", false),
            ("a_c", "aéc", true),
            ("_", "é", true),
            ("__", "é", false),
            ("", "", true),
            ("", "a", false),
            ("%", "", true),
            ("a%b%c", "abc", true),
            ("a%b%c", "aXbYcZ", false),
            ("%ab%ab", "abab", true),
            ("%aab", "aaab", true),
            ("a\\%b", "a%b", true),
            ("a\\%b", "aXb", false),
            ("a\\_%", "a_x", true),
            ("a\\_%", "ab", false),
            ("%\\\\%", "x\\y", true),
            ("%_a", "éa", true),
            ("%_a", "a", false),
        ];
        for (pattern, value, want) in cases {
            assert_eq!(like(pattern, value), want, "{value:?} LIKE {pattern:?}");
        }
    }

    #[test]
    fn binary_values_take_one_byte_for_underscore() {
        let parts = like_parts("_a").unwrap();
        assert!(!like_matches(&parts, "éa".as_bytes(), false));
        assert!(like_matches(&parts, &[0xff, b'a'], false));
    }

    #[test]
    fn plain_prefixes_become_starts_with_and_bad_escapes_are_refused() {
        assert_eq!(like_test("ab%"), Ok(Test::StartsWith("ab".into())));
        assert_eq!(like_test("a\\%%"), Ok(Test::StartsWith("a%".into())));
        assert_eq!(like_test("%ab"), Ok(Test::Like("%ab".into())));
        assert_eq!(like_test("ab"), Ok(Test::Like("ab".into())));
        assert!(like_test("a\\x").unwrap_err().1.contains("escapes only"));
        assert!(like_test("a\\").unwrap_err().1.contains("cannot end"));
        assert_eq!(escape_like("a%_\\"), "a\\%\\_\\\\");
        assert_eq!(
            like_prefix_bytes(&like_parts("ab_c%").unwrap()),
            b"ab".to_vec()
        );
        assert_eq!(
            like_program(&like_parts("a_%").unwrap()),
            vec![0, b'a', 1, 0, 2, 0]
        );
    }
}
