//! The status array `gds_gather_status` writes (`cuda/status.cu`), read
//! back: one [`TaskStatus`] per page task, then per dictionary task.

use super::launch;
use super::task::PageErrorCode;

/// One task's entry of the status array `gds_gather_status` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskStatus {
    /// 0, or a [`PageErrorCode`] as written.
    pub error: u32,
    /// The level index of the error (pages).
    pub error_index: u32,
    /// Null rows (pages).
    pub null_count: u32,
    /// Values decoded (pages), entries found (dictionaries).
    pub count: u32,
}

impl TaskStatus {
    /// The error, if any (`Err(code)` for a number no kernel writes).
    pub fn error(&self) -> Option<Result<PageErrorCode, u32>> {
        (self.error != 0).then(|| PageErrorCode::from_code(self.error).ok_or(self.error))
    }
}

/// Splits the status array copied back (bytes, little-endian words) into
/// the page tasks' and the dictionary tasks' entries; `None` when its length
/// is not [`launch::status_bytes`]`(n_tasks, n_dicts)`.
pub fn parse_status(
    bytes: &[u8],
    n_tasks: u32,
    n_dicts: u32,
) -> Option<(Vec<TaskStatus>, Vec<TaskStatus>)> {
    if bytes.len() as u64 != launch::status_bytes(n_tasks, n_dicts) {
        return None;
    }
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let entry_bytes = (launch::STATUS_WORDS * 4) as usize;
    let mut all = bytes.chunks_exact(entry_bytes).map(|e| TaskStatus {
        error: word(&e[0..4]),
        error_index: word(&e[4..8]),
        null_count: word(&e[8..12]),
        count: word(&e[12..16]),
    });
    let pages: Vec<TaskStatus> = all.by_ref().take(n_tasks as usize).collect();
    let dicts: Vec<TaskStatus> = all.collect();
    Some((pages, dicts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_parsing() {
        let mut bytes = Vec::new();
        for w in [0u32, 0, 3, 17, 11, 5, 0, 5, 12, 0, 0, 2] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        let (pages, dicts) = parse_status(&bytes, 2, 1).unwrap();
        assert_eq!(pages.len(), 2);
        assert_eq!(dicts.len(), 1);
        assert_eq!(pages[0].error(), None);
        assert_eq!(pages[0].null_count, 3);
        assert_eq!(pages[0].count, 17);
        assert_eq!(pages[1].error(), Some(Ok(PageErrorCode::DictIndex)));
        assert_eq!(pages[1].error_index, 5);
        assert_eq!(dicts[0].error(), Some(Ok(PageErrorCode::DictOverrun)));
        assert_eq!(dicts[0].count, 2);
        assert!(parse_status(&bytes, 3, 1).is_none());
        assert!(parse_status(&bytes[..40], 2, 1).is_none());
        let odd = TaskStatus {
            error: 999,
            ..TaskStatus::default()
        };
        assert_eq!(odd.error(), Some(Err(999)));
    }
}
