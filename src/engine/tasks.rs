//! Splitting one request into tasks (pure arithmetic, no I/O).
//!
//! Aligned splits ([`TaskSplit::new`]) put task boundaries on multiples of the
//! task size *in file offsets*: the first task runs from the request's offset
//! up to the next boundary, the last ends with the request. Aligned
//! boundaries keep the middle of every task eligible for O_DIRECT and
//! page-aligned for host registration. Routes that need neither (buffered
//! reads through bounce buffers) split from the request's start instead
//! ([`TaskSplit::relative`]): a 4.7 MB column chunk is then two tasks, not
//! three with a sliver at each end.
//!
//! Tasks are computed on demand from an index, so a 100 GiB request costs
//! the same memory as a 4 KiB one: workers claim indices from a counter.

/// One task: a file range and where it lands in the request's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// Absolute file offset of the task's first byte.
    pub file_offset: u64,
    /// Offset of the task's first byte inside the request's buffer.
    pub buffer_offset: usize,
    /// Length in bytes.
    pub len: usize,
}

/// A request of `len` bytes at `offset`, cut into tasks of `task_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSplit {
    offset: u64,
    len: usize,
    task_size: usize,
    aligned: bool,
}

impl TaskSplit {
    /// Plans a split on file-offset multiples of `task_size` (0 is treated
    /// as 1).
    pub fn new(offset: u64, len: usize, task_size: usize) -> Self {
        TaskSplit {
            offset,
            len,
            task_size: task_size.max(1),
            aligned: true,
        }
    }

    /// Plans a split into `task_size` pieces counted from the request's
    /// first byte (only the last task may be shorter).
    pub fn relative(offset: u64, len: usize, task_size: usize) -> Self {
        TaskSplit {
            aligned: false,
            ..TaskSplit::new(offset, len, task_size)
        }
    }

    /// Bytes before the first aligned boundary (0 when the offset is aligned
    /// or the split is relative).
    fn head(&self) -> usize {
        if !self.aligned {
            return 0;
        }
        let misalign = (self.offset % self.task_size as u64) as usize;
        if misalign == 0 {
            0
        } else {
            (self.task_size - misalign).min(self.len)
        }
    }

    /// Number of tasks (0 for an empty request).
    pub fn count(&self) -> usize {
        if self.len == 0 {
            return 0;
        }
        let head = self.head();
        let rest = self.len - head;
        usize::from(head > 0) + rest.div_ceil(self.task_size)
    }

    /// Task `index`, or `None` past the last.
    pub fn task(&self, index: usize) -> Option<Task> {
        if index >= self.count() {
            return None;
        }
        let head = self.head();
        let (buffer_offset, len) = if head > 0 {
            if index == 0 {
                (0, head)
            } else {
                let start = head + (index - 1) * self.task_size;
                (start, self.task_size.min(self.len - start))
            }
        } else {
            let start = index * self.task_size;
            (start, self.task_size.min(self.len - start))
        };
        Some(Task {
            file_offset: self.offset + buffer_offset as u64,
            buffer_offset,
            len,
        })
    }

    /// Total bytes covered by the tasks.
    pub fn total_len(&self) -> usize {
        self.len
    }

    /// All tasks in order (for tests and small requests).
    pub fn iter(&self) -> impl Iterator<Item = Task> + '_ {
        (0..self.count()).filter_map(|i| self.task(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_cover(split: TaskSplit, offset: u64, len: usize) {
        let tasks: Vec<Task> = split.iter().collect();
        assert_eq!(tasks.len(), split.count());
        let mut expect_buf = 0usize;
        for t in &tasks {
            assert_eq!(t.buffer_offset, expect_buf, "tasks must be contiguous");
            assert_eq!(t.file_offset, offset + t.buffer_offset as u64);
            assert!(t.len > 0);
            expect_buf += t.len;
        }
        assert_eq!(expect_buf, len, "tasks must cover the request exactly");
    }

    #[test]
    fn aligned_request_splits_evenly() {
        let s = TaskSplit::new(0, 16, 4);
        assert_eq!(s.count(), 4);
        assert_eq!(
            s.task(3),
            Some(Task {
                file_offset: 12,
                buffer_offset: 12,
                len: 4
            })
        );
        assert_eq!(s.task(4), None);
        check_cover(s, 0, 16);
    }

    #[test]
    fn odd_sizes_give_a_short_last_task() {
        let s = TaskSplit::new(0, 10, 4);
        assert_eq!(s.count(), 3);
        assert_eq!(s.task(2).unwrap().len, 2);
        check_cover(s, 0, 10);
    }

    #[test]
    fn unaligned_offset_gets_a_head_task_up_to_the_boundary() {
        let s = TaskSplit::new(5, 20, 8);
        let tasks: Vec<_> = s.iter().collect();
        assert_eq!(tasks[0].file_offset, 5);
        assert_eq!(tasks[0].len, 3);
        assert_eq!(tasks[1].file_offset, 8);
        for t in &tasks[1..] {
            assert_eq!(t.file_offset % 8, 0, "later tasks start on boundaries");
        }
        assert_eq!(
            tasks.last().unwrap().file_offset + tasks.last().unwrap().len as u64,
            25
        );
        check_cover(s, 5, 20);
    }

    #[test]
    fn request_inside_one_task_is_one_task() {
        let s = TaskSplit::new(5, 2, 8);
        assert_eq!(s.count(), 1);
        assert_eq!(s.task(0).unwrap().len, 2);
        check_cover(s, 5, 2);
    }

    #[test]
    fn empty_request_has_no_tasks() {
        assert_eq!(TaskSplit::new(3, 0, 8).count(), 0);
        assert_eq!(TaskSplit::new(3, 0, 8).task(0), None);
    }

    #[test]
    fn huge_request_is_computed_not_allocated() {
        let len = 100usize << 30;
        let s = TaskSplit::new(0, len, 4 << 20);
        assert_eq!(s.count(), 25_600);
        let last = s.task(25_599).unwrap();
        assert_eq!(last.buffer_offset + last.len, len);
    }

    #[test]
    fn many_shapes_cover_exactly() {
        for offset in [0u64, 1, 7, 4095, 4096, 12345] {
            for len in [1usize, 2, 4095, 4096, 4097, 65_537] {
                for task in [1usize, 3, 4096, 10_000] {
                    check_cover(TaskSplit::new(offset, len, task), offset, len);
                    check_cover(TaskSplit::relative(offset, len, task), offset, len);
                }
            }
        }
    }

    #[test]
    fn relative_split_counts_from_the_request_start() {
        let s = TaskSplit::relative(5, 20, 8);
        let lens: Vec<usize> = s.iter().map(|t| t.len).collect();
        assert_eq!(lens, [8, 8, 4]);
        assert_eq!(s.task(1).unwrap().file_offset, 13);
        // The aligned split of the same request has a head sliver.
        assert_eq!(TaskSplit::new(5, 20, 8).count(), 4);
        assert_eq!(TaskSplit::new(5, 20, 8).task(0).unwrap().len, 3);
        assert_eq!(
            TaskSplit::relative(4_000_000, 4_700_000, 4 << 20).count(),
            2
        );
        assert_eq!(TaskSplit::new(4_000_000, 4_700_000, 4 << 20).count(), 3);
    }
}
