//! The shared pipeline's driver on the CPU: a fake GPU queue that finishes
//! each group at once (host-memory batches), fake decodes that play a
//! script of planned groups, and the real driver, outboxes and readers
//! between them.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::scan_job::NextGroup;
use super::shared_driver::{Driver, DriverJob, DriverQueue, Hub, Submission};
use super::shared_handover::Outbox;
use super::shared_pipeline::SharedStream;
use super::shared_pipeline_tests::{batch, read_all, schema};
use super::{DecodeError, DecodeReport};
use crate::decode::array::DeviceBatch;

/// How a fake group ends on the fake GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ends {
    Clean,
    /// A typed error of this group only (as a corrupt page).
    Corrupt,
    /// The GPU never finishes it.
    Timeout,
}

/// A planned group: its row groups' values, and how it ends.
#[derive(Debug, Clone)]
struct Group {
    row_groups: Vec<Vec<i32>>,
    ends: Ends,
}

/// One step of a fake decode's planner.
#[derive(Debug, Clone)]
enum Step {
    Ready(Group),
    /// Not planned yet when asked (the next ask gets the rest).
    NotYet,
    /// The planner fails.
    Fail,
}

struct FakeJob {
    steps: VecDeque<Step>,
    report: DecodeReport,
}

impl DriverJob for FakeJob {
    type Group = Group;
    type Finished = Vec<i32>;

    fn next_group(&mut self) -> NextGroup<Group> {
        match self.steps.pop_front() {
            None => NextGroup::End,
            Some(Step::NotYet) => NextGroup::NotYet,
            Some(Step::Fail) => NextGroup::Failed(DecodeError::PlannerEnded {
                why: "a test's planner".into(),
            }),
            Some(Step::Ready(g)) => NextGroup::Ready(g),
        }
    }

    fn take_group(&mut self, finished: Vec<Vec<i32>>) -> Result<Vec<DeviceBatch>, DecodeError> {
        self.report.row_groups += finished.len();
        // Empty row groups stand for rows a filter did not keep.
        Ok(finished
            .iter()
            .filter(|v| !v.is_empty())
            .map(|v| batch(v))
            .collect())
    }

    fn report(&self) -> &DecodeReport {
        &self.report
    }
}

/// A GPU queue that finishes a group when asked, logging each launch.
struct FakeQueue {
    depth: usize,
    queued: VecDeque<(usize, Group)>,
    launches: Arc<Mutex<Vec<usize>>>,
}

impl DriverQueue for FakeQueue {
    type Job = FakeJob;

    fn has_room(&self) -> bool {
        self.queued.len() < self.depth
    }

    fn launch(&mut self, id: usize, _job: &FakeJob, group: Group) -> Result<(), DecodeError> {
        self.launches.lock().unwrap().push(id);
        self.queued.push_back((id, group));
        Ok(())
    }

    fn finish_group(&mut self) -> Option<(usize, Result<Vec<Vec<i32>>, DecodeError>)> {
        let (id, group) = self.queued.pop_front()?;
        let result = match group.ends {
            Ends::Clean => Ok(group.row_groups),
            Ends::Corrupt => Err(DecodeError::PlannerEnded {
                why: "a corrupt page (a test)".into(),
            }),
            Ends::Timeout => Err(DecodeError::DeviceTimeout {
                file: "test.parquet".into(),
                row_group: 0,
                group: 0,
                first_column: "x".into(),
                columns: 1,
                pages: 1,
                limit: Duration::from_millis(1),
            }),
        };
        Some((id, result))
    }

    fn abandon(&mut self) {
        self.queued.clear();
    }

    fn drop_job(&mut self, id: usize) {
        self.queued.retain(|(j, _)| *j != id);
    }

    fn holds(&self, id: usize) -> bool {
        self.queued.iter().any(|(j, _)| *j == id)
    }
}

/// A driver on a fake queue of `depth` groups, on a thread of its own
/// once started.
struct Rig {
    submit: Option<Sender<Submission<FakeJob>>>,
    hub: Arc<Hub>,
    launches: Arc<Mutex<Vec<usize>>>,
    driver: Option<Driver<FakeQueue>>,
    running: Option<JoinHandle<String>>,
}

impl Rig {
    /// A driver not started: decodes handed in wait for it.
    fn new(depth: usize) -> Rig {
        let (tx, rx) = channel();
        let hub = Arc::new(Hub::default());
        let launches = Arc::new(Mutex::new(Vec::new()));
        let queue = FakeQueue {
            depth,
            queued: VecDeque::new(),
            launches: launches.clone(),
        };
        let driver = Driver::new(queue, depth, rx, hub.clone());
        Rig {
            submit: Some(tx),
            hub,
            launches,
            driver: Some(driver),
            running: None,
        }
    }

    /// Starts the driver.
    fn start(&mut self) {
        let driver = self.driver.take().unwrap();
        self.running = Some(std::thread::spawn(move || driver.run()));
    }

    /// Hands a decode of `steps` in; its reader.
    fn decode(&self, steps: Vec<Step>) -> SharedStream {
        let outbox = Arc::new(Outbox::default());
        self.hub.outboxes.lock().unwrap().push(outbox.clone());
        let job = FakeJob {
            steps: steps.into(),
            report: DecodeReport::default(),
        };
        self.submit
            .as_ref()
            .unwrap()
            .send(Submission {
                job,
                outbox: outbox.clone(),
            })
            .unwrap();
        self.hub.wake.bump();
        SharedStream::for_test(outbox, self.hub.wake.clone(), schema())
    }

    /// No decode comes any more: the driver ends once every decode has.
    fn finish(mut self) -> String {
        self.submit.take();
        self.hub.wake.bump();
        let why = self.running.take().unwrap().join().unwrap();
        assert!(
            self.hub.outboxes.lock().unwrap().is_empty(),
            "every decode retired"
        );
        why
    }
}

/// `n` clean groups of two row groups each, values from `base`.
fn groups(n: i32, base: i32) -> Vec<Step> {
    (0..n)
        .map(|g| {
            Step::Ready(Group {
                row_groups: vec![vec![base + 2 * g], vec![base + 2 * g + 1]],
                ends: Ends::Clean,
            })
        })
        .collect()
}

#[test]
fn decodes_on_one_driver_each_get_their_groups_in_order() {
    let mut rig = Rig::new(4);
    let mut script = groups(6, 1000);
    // A planner that is late twice, and a filter that keeps no row of a group.
    script.insert(2, Step::NotYet);
    script.insert(5, Step::NotYet);
    script.push(Step::Ready(Group {
        row_groups: vec![vec![], vec![]],
        ends: Ends::Clean,
    }));
    let readers = vec![
        rig.decode(script),
        rig.decode(groups(9, 2000)),
        rig.decode(groups(1, 3000)),
        rig.decode(Vec::new()), // nothing planned at all
    ];
    rig.start();
    let threads: Vec<_> = readers
        .into_iter()
        .map(|r| std::thread::spawn(move || read_all(r)))
        .collect();
    let got: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(got[0].0, (1000..1012).collect::<Vec<_>>());
    assert!(got.iter().all(|(_, e)| e.is_none()));
    assert_eq!(got[1].0, (2000..2018).collect::<Vec<_>>());
    assert_eq!(got[2].0, vec![3000, 3001]);
    assert!(got[3].0.is_empty() && got[3].1.is_none());
    // Turns: the first launches alternate between the decodes.
    let launches = rig.launches.lock().unwrap().clone();
    assert_eq!(launches.len(), 6 + 1 + 9 + 1);
    let first_three: std::collections::HashSet<_> = launches.iter().take(3).collect();
    assert!(first_three.len() >= 2, "decodes take turns: {launches:?}");
    assert_eq!(rig.finish(), "no decode is left and none can come");
}

#[test]
fn a_reader_that_stops_holds_up_only_its_own_decode() {
    let mut rig = Rig::new(4);
    let mut slow = rig.decode(groups(50, 0));
    let fast = rig.decode(groups(40, 10_000));
    rig.start();
    // The slow reader takes one batch and stops reading.
    assert!(slow.next().unwrap().is_ok());
    let (values, error) = read_all(fast);
    assert_eq!(values, (10_000..10_080).collect::<Vec<_>>());
    assert!(error.is_none());
    let launches = rig.launches.lock().unwrap().clone();
    let fast_last = launches.iter().rposition(|&j| j == 1).unwrap();
    let slow_beside = launches[..fast_last].iter().filter(|&&j| j == 0).count();
    let slow_all = launches.iter().filter(|&&j| j == 0).count();
    // While the fast decode ran: the group read and the two a decode holds
    // beside others. Alone after it: the depth and one more on top.
    assert!(
        slow_beside <= 1 + 2,
        "{slow_beside} launched beside: {launches:?}"
    );
    assert!(
        slow_all <= 1 + 4 + 1,
        "{slow_all} of its 50 groups launched"
    );
    // Dropped, the slow decode ends: the driver retires it and ends.
    drop(slow);
    assert_eq!(rig.finish(), "no decode is left and none can come");
}

#[test]
fn a_failing_decode_ends_alone_after_its_groups_before() {
    let mut rig = Rig::new(2);
    let mut corrupt = groups(2, 0);
    corrupt.push(Step::Ready(Group {
        row_groups: vec![vec![99]],
        ends: Ends::Corrupt,
    }));
    corrupt.extend(groups(3, 500));
    let mut planner_fails = groups(1, 700);
    planner_fails.push(Step::Fail);
    let readers = [
        rig.decode(corrupt),
        rig.decode(groups(10, 100)),
        rig.decode(planner_fails),
    ];
    rig.start();
    let got: Vec<_> = readers.into_iter().map(read_all).collect();
    assert_eq!(got[0].0, vec![0, 1, 2, 3], "nothing after the failure");
    assert!(matches!(got[0].1, Some(DecodeError::PlannerEnded { .. })));
    assert_eq!(got[1].0, (100..120).collect::<Vec<_>>());
    assert!(got[1].1.is_none());
    assert_eq!(got[2].0, vec![700, 701]);
    assert!(matches!(got[2].1, Some(DecodeError::PlannerEnded { .. })));
    assert_eq!(rig.finish(), "no decode is left and none can come");
}

#[test]
fn a_device_timeout_ends_every_decode_with_a_typed_error() {
    let mut rig = Rig::new(2);
    let mut stuck = groups(1, 0);
    stuck.push(Step::Ready(Group {
        row_groups: vec![vec![5]],
        ends: Ends::Timeout,
    }));
    stuck.extend(groups(5, 10));
    let other = rig.decode(groups(1000, 1_000_000));
    let stuck = rig.decode(stuck);
    rig.start();
    // The driver ends on the timeout; the pipeline's end then reaches
    // every decode not ended (here by hand, as `Pipeline::end` does).
    let why = rig.running.take().unwrap().join().unwrap();
    let hub = rig.hub.clone();
    assert!(why.contains("test.parquet"), "{why}");
    hub.end_all(&why);
    let (values, error) = read_all(stuck);
    assert_eq!(values, vec![0, 1]);
    assert!(matches!(error, Some(DecodeError::DeviceTimeout { .. })));
    let (values, error) = read_all(other);
    assert!(values.len() < 2000, "the other decode was cut short");
    assert_eq!(
        values,
        (1_000_000..1_000_000 + values.len() as i32).collect::<Vec<_>>()
    );
    assert!(matches!(error, Some(DecodeError::PipelineEnded { .. })));
}
