//! Locations as they may be shown: a URL's user name and password replaced
//! by `***` before it reaches an error, a log line, a report or a label.

/// `location` with any `user:password@` (or `user@`) of a URL replaced by
/// `***@`; a path, or a URL without credentials, unchanged.
pub(crate) fn redact(location: &str) -> String {
    let Some(scheme_end) = location.find("://") else {
        return location.to_string();
    };
    let rest = &location[scheme_end + 3..];
    // The authority ends at the first '/', '?' or '#'; credentials end at
    // its last '@'.
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &location[..scheme_end + 3], &rest[at + 1..]),
        None => location.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn credentials_are_replaced_and_the_rest_kept() {
        assert_eq!(
            redact("https://alice:s3cr3t@example.com:8080/a/b.parquet?x=1"),
            "https://***@example.com:8080/a/b.parquet?x=1"
        );
        assert_eq!(redact("http://token@h/x"), "http://***@h/x");
        assert_eq!(redact("http://a:b@c@h/x@y"), "http://***@h/x@y");
        assert_eq!(redact("s3://bucket/key@1"), "s3://bucket/key@1");
        assert_eq!(redact("/plain/p@th"), "/plain/p@th");
        assert_eq!(redact("http://h?q=a@b"), "http://h?q=a@b");
    }
}
