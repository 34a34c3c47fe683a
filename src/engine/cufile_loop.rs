//! The loop around `cuFileRead`/`cuFileWrite`: a call may move fewer bytes
//! than asked (then the rest is asked again), none (the file ended early),
//! report a failure (a negative count), or claim more than it was asked
//! for (a broken library: never trusted). Pure, so every outcome is tested
//! without cuFile or a GPU; `transfer.rs` turns each into a typed error.

/// How a transfer of `len` bytes ended short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shortfall {
    /// A call returned this negative count after `done` bytes had moved.
    Failed { done: usize, ret: isize },
    /// A call moved nothing after `done` bytes: the file ended early.
    Ended { done: usize },
    /// A call claimed `ret` bytes when `asked` remained, after `done`.
    Overcount {
        done: usize,
        asked: usize,
        ret: isize,
    },
}

/// Moves `len` bytes by calling `step(remaining, done)` (which returns the
/// bytes it moved, or a negative count) until all have moved or a call
/// falls short.
pub(super) fn transfer_all(
    len: usize,
    mut step: impl FnMut(usize, usize) -> isize,
) -> Result<(), Shortfall> {
    let mut done = 0usize;
    while done < len {
        let asked = len - done;
        let ret = step(asked, done);
        if ret < 0 {
            return Err(Shortfall::Failed { done, ret });
        }
        if ret == 0 {
            return Err(Shortfall::Ended { done });
        }
        if ret as usize > asked {
            return Err(Shortfall::Overcount { done, asked, ret });
        }
        done += ret as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `transfer_all` over `len` bytes with calls returning `script`
    /// in turn; returns the outcome and each call's (asked, done).
    fn run(len: usize, script: &[isize]) -> (Result<(), Shortfall>, Vec<(usize, usize)>) {
        let mut calls = Vec::new();
        let mut next = script.iter();
        let out = transfer_all(len, |asked, done| {
            calls.push((asked, done));
            *next.next().expect("no more calls scripted")
        });
        (out, calls)
    }

    #[test]
    fn one_full_call() {
        assert_eq!(run(100, &[100]), (Ok(()), vec![(100, 0)]));
    }

    #[test]
    fn short_counts_ask_again_for_the_rest_at_the_right_offset() {
        let (out, calls) = run(100, &[30, 50, 20]);
        assert_eq!(out, Ok(()));
        assert_eq!(calls, vec![(100, 0), (70, 30), (20, 80)]);
    }

    #[test]
    fn a_negative_count_fails_with_what_had_moved() {
        assert_eq!(
            run(100, &[-5]).0,
            Err(Shortfall::Failed { done: 0, ret: -5 })
        );
        assert_eq!(
            run(100, &[40, -1]).0,
            Err(Shortfall::Failed { done: 40, ret: -1 })
        );
    }

    #[test]
    fn a_call_moving_nothing_ends_it() {
        assert_eq!(run(100, &[60, 0]).0, Err(Shortfall::Ended { done: 60 }));
    }

    #[test]
    fn a_count_larger_than_asked_is_never_trusted() {
        assert_eq!(
            run(100, &[60, 41]).0,
            Err(Shortfall::Overcount {
                done: 60,
                asked: 40,
                ret: 41
            })
        );
        assert_eq!(
            run(100, &[isize::MAX]).0,
            Err(Shortfall::Overcount {
                done: 0,
                asked: 100,
                ret: isize::MAX
            })
        );
    }

    #[test]
    fn nothing_to_move_makes_no_call() {
        assert_eq!(run(0, &[]), (Ok(()), vec![]));
    }
}
