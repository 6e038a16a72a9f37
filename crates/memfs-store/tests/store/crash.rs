//! Criterion 7: a failure at any storage operation leaves a store that opens, verifies, and
//! holds the state before or after the interrupted command, with every acknowledged command.
//!
//! A fixed sequence runs once without faults over a counting [`FaultStore`], recording each
//! command's answer, operations and resulting state. Then, for every class (and for any
//! class), for every N from 1 to the number of such operations, and for both a failure before
//! the operation and one after it (the write happened, the caller is told it failed): a fresh
//! store runs the sequence with that one fault, stops at the first command that fails, and a
//! new client, faults off, checks the store; it then finishes the sequence and must reach the
//! fault-free final state.

use std::sync::Arc;

use memfs_core::ToolResult;
use memfs_store::fault::{Fault, FaultPlan, FaultStore, OpClass, OpCounts, Target};
use memfs_store::{Backend, EncryptedRepository, Error};
use object_store::memory::InMemory;
use object_store::{ObjectStore, ObjectStoreExt};
use serde_json::{Value, json};

use crate::support::{Snapshot, check, init, init_carrying, injected, open, open_carrying, run, verify};

/// Creates, edits, directory renames, a deduplicated content, deletes and a read.
pub(crate) fn sequence() -> Vec<Value> {
    vec![
        json!({"command": "create", "path": "/memories/notes.md", "file_text": "alpha\nbeta\n"}),
        json!({"command": "create", "path": "/memories/projects/a/plan.md", "file_text": "step one\nstep two\n"}),
        json!({"command": "create", "path": "/memories/projects/a/deep/x.txt", "file_text": "x marks the spot"}),
        json!({"command": "str_replace", "path": "/memories/notes.md", "old_str": "beta", "new_str": "gamma"}),
        json!({"command": "insert", "path": "/memories/projects/a/plan.md", "insert_line": 1, "insert_text": "inserted"}),
        json!({"command": "view", "path": "/memories"}),
        json!({"command": "rename", "old_path": "/memories/projects/a", "new_path": "/memories/archive/a"}),
        // Same content as x.txt: its object already exists (an idempotent write).
        json!({"command": "create", "path": "/memories/projects/copy.txt", "file_text": "x marks the spot"}),
        json!({"command": "delete", "path": "/memories/archive/a/deep"}),
        json!({"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/archive/notes.md"}),
        json!({"command": "create", "path": "/memories/notes.md", "file_text": "fresh notes\n"}),
        json!({"command": "delete", "path": "/memories/projects"}),
        json!({"command": "str_replace", "path": "/memories/archive/notes.md", "old_str": "gamma", "new_str": "delta"}),
    ]
}

/// The fault-free run.
pub(crate) struct Baseline {
    pub(crate) commands: Vec<Value>,
    pub(crate) answers: Vec<ToolResult>,
    /// `states[0]` is the new store, `states[i + 1]` the state after command `i`.
    pub(crate) states: Vec<Snapshot>,
    /// Operations of each command.
    pub(crate) ops: Vec<OpCounts>,
    /// The writers' [`memfs_store::OpenOptions::unwritten_bytes`].
    pub(crate) unwritten: Option<usize>,
}

impl Baseline {
    /// Runs `commands` on a fresh store over `store` (a counting fault store over `raw`),
    /// checking the state with a new client over `raw` after each.
    pub(crate) async fn record(
        commands: Vec<Value>,
        raw: Arc<dyn ObjectStore>,
        store: Arc<dyn ObjectStore>,
        plan: &FaultPlan,
        unwritten: Option<usize>,
    ) -> Baseline {
        let repo = init_carrying(Backend::ObjectStore(store), None, unwritten).await.expect("init");
        let mut states = vec![verify(&repo).await.expect("verify")];
        let (mut answers, mut ops) = (Vec::new(), Vec::new());
        for command in &commands {
            let before = plan.counts();
            let answer = run(&repo, command).await.expect("fault-free run");
            assert!(!answer.is_error, "{command} failed: {}", answer.content);
            ops.push(plan.counts().since(&before));
            answers.push(answer);
            let checker = open(Backend::ObjectStore(raw.clone()), None).await.expect("open");
            states.push(verify(&checker).await.expect("verify"));
        }
        Baseline { commands, answers, states, ops, unwritten }
    }

    pub(crate) fn total(&self, target: Target) -> u64 {
        self.ops
            .iter()
            .map(|c| match target {
                Target::Any => c.total(),
                Target::Class(class) => c.get(class),
            })
            .sum()
    }
}

/// How one faulted run ended.
#[derive(Debug, Default)]
struct Tally {
    runs: u64,
    states_checked: u64,
    /// The interrupted command's effect is absent.
    before: u64,
    /// The interrupted command's effect is present although it reported an error.
    after: u64,
    /// A read-only command was interrupted (before and after are the same state).
    read_only: u64,
    /// The fault hit an operation whose failure no command noticed.
    absorbed: u64,
    /// Objects left unreferenced by interrupted commands, summed over runs.
    unreferenced: u64,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, o: Tally) {
        self.runs += o.runs;
        self.states_checked += o.states_checked;
        self.before += o.before;
        self.after += o.after;
        self.read_only += o.read_only;
        self.absorbed += o.absorbed;
        self.unreferenced += o.unreferenced;
    }
}

/// One run with a fault at `target` operation `nth`; with `resume`, the store then finishes
/// the sequence.
async fn faulted_run(baseline: &Baseline, target: Target, nth: u64, fault: Fault, resume: bool, tally: &mut Tally) {
    faulted_run_on(baseline, target, nth, fault, resume, tally, &|| Arc::new(InMemory::new())).await;
}

/// [`faulted_run`] on a fresh store from `fresh` (memory, or a cloud emulator).
async fn faulted_run_on(
    baseline: &Baseline,
    target: Target,
    nth: u64,
    fault: Fault,
    resume: bool,
    tally: &mut Tally,
    fresh: &dyn Fn() -> Arc<dyn ObjectStore>,
) {
    let what = format!("{fault:?} at {target} operation {nth}");
    let raw = fresh();
    let faulty = Arc::new(FaultStore::new(raw.clone()));
    let plan = faulty.plan().clone();
    let state = tempfile::tempdir().unwrap();
    let repo = init_carrying(Backend::ObjectStore(faulty), Some(state.path()), baseline.unwritten).await.expect("init");
    plan.arm(target, nth, fault);

    let mut interrupted = None;
    for (i, command) in baseline.commands.iter().enumerate() {
        match run(&repo, command).await {
            Ok(answer) => {
                assert_eq!(answer, baseline.answers[i], "{what}: command {i} ({command}) answered differently")
            }
            Err(e) => {
                assert!(injected(&e).is_some(), "{what}: command {i} failed with a non-injected error: {e:?}");
                interrupted = Some(i);
                break;
            }
        }
    }
    assert_eq!(plan.injected(), 1, "{what}: the fault did not fire within the sequence");
    plan.disarm();
    drop(repo);

    // Faults off, a new client: the store opens and verifies.
    let client = open_carrying(Backend::ObjectStore(raw.clone()), Some(state.path()), baseline.unwritten)
        .await
        .unwrap_or_else(|e| panic!("{what}: the store does not open: {e:?}"));
    let snapshot = verify(&client).await.unwrap_or_else(|e| panic!("{what}: verification fails: {e:?}"));
    tally.unreferenced += check(&client).await;
    tally.runs += 1;
    tally.states_checked += 1;
    let next = match interrupted {
        None => {
            tally.absorbed += 1;
            assert_eq!(&snapshot, baseline.states.last().unwrap(), "{what}: absorbed fault, wrong final state");
            return;
        }
        Some(i) => {
            let (before, after) = (&baseline.states[i], &baseline.states[i + 1]);
            if before == after {
                tally.read_only += 1;
            } else if &snapshot == before {
                tally.before += 1;
            } else if &snapshot == after {
                tally.after += 1;
            }
            assert!(
                &snapshot == before || &snapshot == after,
                "{what}: command {i} ({}) was interrupted; the store holds neither the state before nor after it\n\
                 found:\n{snapshot:?}\nbefore:\n{before:?}\nafter:\n{after:?}",
                baseline.commands[i]
            );
            if &snapshot == before { i } else { i + 1 }
        }
    };

    if !resume {
        return;
    }
    // The store goes on: the rest of the sequence reaches the fault-free final state.
    for (i, command) in baseline.commands.iter().enumerate().skip(next) {
        let answer = run(&client, command).await.unwrap_or_else(|e| panic!("{what}: resuming at {i}: {e:?}"));
        assert_eq!(answer, baseline.answers[i], "{what}: resumed command {i} ({command}) answered differently");
    }
    let last = open(Backend::ObjectStore(raw), Some(state.path())).await.expect("open");
    assert_eq!(&verify(&last).await.unwrap(), baseline.states.last().unwrap(), "{what}: final state after resuming");
    tally.states_checked += 1;
}

/// The commits store every object before their head.
#[tokio::test]
async fn every_fault_point_leaves_a_consistent_store() {
    let baseline = fault_sweep(Some(0)).await;
    assert!(baseline.ops.iter().all(|c| c.put != 1), "every commit stores objects: {:?}", baseline.ops);
}

/// The commits carry their objects unwritten in the head, and one that passes the
/// budget (a small one here: every third commit or so) stores them all after its head swap and
/// swaps in a head without them (or, past twice the budget, stores them before its swap).
#[tokio::test]
async fn every_fault_point_with_objects_carried_in_the_head_leaves_a_consistent_store() {
    let baseline = fault_sweep(Some(1536)).await;
    let puts: Vec<u64> = baseline.ops.iter().map(|c| c.put).collect();
    assert!(puts.iter().filter(|p| **p == 1).count() >= 4, "commits of one request (the head): {puts:?}");
    assert!(puts.iter().any(|p| *p > 3), "commits that store what was carried: {puts:?}");
}

/// Runs the sequence with a fault at every operation (each class, before and after it reaches
/// the store), the writers carrying up to `unwritten` bytes of objects in the head; returns
/// the fault-free run.
async fn fault_sweep(unwritten: Option<usize>) -> Baseline {
    let raw = Arc::new(InMemory::new());
    let counting = Arc::new(FaultStore::new(raw.clone()));
    let plan = counting.plan().clone();
    let baseline = Baseline::record(sequence(), raw, counting, &plan, unwritten).await;

    let targets = [Target::Any, Target::Class(OpClass::Put), Target::Class(OpClass::Get)];
    let mut tally = Tally::default();
    let mut tried = Vec::new();
    for target in targets {
        let points = baseline.total(target);
        for fault in [Fault::Fail, Fault::FailAfter] {
            for nth in 1..=points {
                // The class passes hit the same operations as the any pass, in another
                // order of counting: resuming once per operation (in the any pass) is enough.
                faulted_run(&baseline, target, nth, fault, target == Target::Any, &mut tally).await;
            }
        }
        tried.push(format!("{target}: {points}"));
    }
    // The repository never lists or deletes: those classes have no fault points here.
    for class in [OpClass::List, OpClass::Delete] {
        assert_eq!(baseline.total(Target::Class(class)), 0, "{class} operations appeared");
    }

    let per_command: Vec<String> = baseline
        .ops
        .iter()
        .zip(&baseline.commands)
        .map(|(c, cmd)| format!("{} put {} get {}", cmd["command"].as_str().unwrap(), c.put, c.get))
        .collect();
    eprintln!("crash: operations per command: {}", per_command.join("; "));
    eprintln!(
        "crash: fault points per pass: {}; passes: fail-before and fail-after; runs {}; states checked {} (+{} baseline)",
        tried.join(", "),
        tally.runs,
        tally.states_checked,
        baseline.states.len()
    );
    eprintln!(
        "crash: interrupted command left the state before {} times, after {} times (read-only {}, absorbed {}); \
         check passed every time, finding {} unreferenced objects in all (garbage for gc)",
        tally.before, tally.after, tally.read_only, tally.absorbed, tally.unreferenced
    );

    let any = baseline.total(Target::Any);
    let expected_runs =
        2 * (any + baseline.total(Target::Class(OpClass::Put)) + baseline.total(Target::Class(OpClass::Get)));
    assert!(any > 0);
    assert_eq!(any, baseline.total(Target::Class(OpClass::Put)) + baseline.total(Target::Class(OpClass::Get)));
    assert_eq!(tally.runs, expected_runs);
    assert_eq!(tally.before + tally.after + tally.read_only + tally.absorbed, tally.runs);
    // An error answer means the command is not in: a head write that landed but reported an
    // error is confirmed by reading the head back (absorbed), never answered as a failure.
    assert!(tally.before > 0 && tally.absorbed > 0, "{tally:?}");
    assert_eq!(tally.after, 0, "a failed command took effect: {tally:?}");
    baseline
}

/// The same fault points on S3 (moto): every operation of the sequence fails once, before or
/// after reaching the server, and the store is consistent afterwards and finishes the sequence.
/// (The class passes of the memory test hit the same operations; once per operation is enough
/// here.)
#[tokio::test]
async fn every_fault_point_on_s3_leaves_a_consistent_store() {
    let Some(first) = crate::backends::fresh(crate::backends::Kind::S3) else { return };
    let raw = Arc::clone(&first.store);
    let counting = Arc::new(FaultStore::new(raw.clone()));
    let plan = counting.plan().clone();
    let baseline = Baseline::record(sequence(), raw, counting, &plan, None).await;
    let fresh = || -> Arc<dyn ObjectStore> {
        Arc::clone(&crate::backends::fresh(crate::backends::Kind::S3).expect("the S3 emulator").store)
    };
    let mut tally = Tally::default();
    let points = baseline.total(Target::Any);
    let runs: Vec<(Fault, u64)> =
        [Fault::Fail, Fault::FailAfter].into_iter().flat_map(|f| (1..=points).map(move |n| (f, n))).collect();
    // Each run has its own prefix: 8 at a time, as the emulator's latency, not the CPU, bounds them.
    for batch in runs.chunks(8) {
        let tallies = futures::future::join_all(batch.iter().map(|&(fault, nth)| {
            let (baseline, fresh) = (&baseline, &fresh);
            async move {
                let mut t = Tally::default();
                faulted_run_on(baseline, Target::Any, nth, fault, true, &mut t, fresh).await;
                t
            }
        }))
        .await;
        for t in tallies {
            tally += t;
        }
    }
    eprintln!(
        "crash on S3: {points} fault points, {} runs: state before {} times, after {} (read-only {}, absorbed {})",
        tally.runs, tally.before, tally.after, tally.read_only, tally.absorbed
    );
    assert_eq!(tally.runs, 2 * points);
    assert_eq!(tally.before + tally.after + tally.read_only + tally.absorbed, tally.runs);
    assert!(tally.before > 0 && tally.absorbed > 0, "{tally:?}");
    assert_eq!(tally.after, 0, "a failed command took effect: {tally:?}");
}

#[tokio::test]
async fn a_failed_init_leaves_no_store_or_a_whole_one() {
    for fault in [Fault::Fail, Fault::FailAfter] {
        let raw = Arc::new(InMemory::new());
        let faulty = Arc::new(FaultStore::new(raw.clone()));
        faulty.plan().arm(Target::Any, 1, fault);
        let e = init(Backend::ObjectStore(faulty), None).await.err().expect("init fails");
        assert!(injected(&e).is_some(), "{e:?}");
        let exists = EncryptedRepository::exists(Backend::ObjectStore(raw.clone())).await.unwrap();
        match fault {
            Fault::Fail => {
                assert!(!exists);
                assert!(matches!(open(Backend::ObjectStore(raw.clone()), None).await, Err(Error::NotInitialized)));
                init(Backend::ObjectStore(raw.clone()), None).await.expect("init again");
            }
            _ => {
                // The key object was written: the store is whole and opens; a second init refuses.
                assert!(exists);
                let repo = open(Backend::ObjectStore(raw.clone()), None).await.expect("open");
                assert!(verify(&repo).await.unwrap().paths.is_empty());
                assert!(matches!(init(Backend::ObjectStore(raw.clone()), None).await, Err(Error::AlreadyInitialized)));
            }
        }
        raw.head(&object_store::path::Path::from("memfs.keys")).await.expect("keys");
    }
}

/// What a rotation test interrupts.
#[derive(Clone, Copy, Debug, PartialEq)]
enum KeyWork {
    /// `key rotate`: `memfs.keys` rewritten, then a commit recording it.
    Rotate,
    /// `key reseal --history` after a rotation: every object sealed again under epoch 1.
    Reseal,
}

/// `memfs key rotate` on `store`, with the tests' key file.
async fn rotate(store: Arc<dyn ObjectStore>) -> Result<(), Error> {
    let (credential, options) = (crate::support::credential(), crate::support::options(None));
    let plan = memfs_store::RotateKeys::default();
    EncryptedRepository::rotate_keys(Backend::ObjectStore(store), &credential, options, plan).await.map(drop)
}

/// A store after the first commands of [`sequence`] (each acknowledged), and for a reseal
/// after a rotation; with `arm`, the fault set just before the work.
async fn key_work_store(work: KeyWork, arm: Option<(u64, Fault)>) -> (Arc<InMemory>, Result<(), Error>, OpCounts) {
    let raw = Arc::new(InMemory::new());
    let faulty = Arc::new(FaultStore::new(raw.clone()));
    let plan = faulty.plan().clone();
    let repo = init(Backend::ObjectStore(faulty.clone()), None).await.expect("init");
    for command in sequence().iter().take(8) {
        assert!(!run(&repo, command).await.expect("a command").is_error);
    }
    let rotate = || rotate(faulty.clone());
    if work == KeyWork::Reseal {
        rotate().await.expect("the rotation before the reseal");
    }
    let client = open(Backend::ObjectStore(faulty.clone()), None).await.expect("open");
    let before = plan.counts();
    if let Some((nth, fault)) = arm {
        plan.arm(Target::Any, nth, fault);
    }
    let result = match work {
        KeyWork::Rotate => rotate().await,
        KeyWork::Reseal => {
            let options = memfs_store::ResealOptions { history: true };
            client.reseal(options, &()).await.map(drop)
        }
    };
    if arm.is_some() {
        assert_eq!(plan.injected(), 1, "{work:?}: the fault at {arm:?} did not fire");
    }
    plan.disarm();
    (raw, result, plan.counts().since(&before))
}

/// Issue 17: a failure at every storage operation of a rotation and of a reseal, before or
/// after the operation reaches the store. Afterwards the store opens with the owner's key file,
/// holds exactly the files every acknowledged command wrote, checks clean reading every object,
/// and the work run again completes (a reseal then finds nothing left under an older epoch).
#[tokio::test]
async fn every_fault_point_of_a_rotation_and_a_reseal_leaves_a_consistent_store() {
    let mut report = Vec::new();
    for work in [KeyWork::Rotate, KeyWork::Reseal] {
        let (raw, result, ops) = key_work_store(work, None).await;
        result.expect("the fault-free run");
        let expected = verify(&open(Backend::ObjectStore(raw), None).await.unwrap()).await.unwrap();
        let points = ops.total();
        assert!(points > 0);
        let mut failed = 0;
        for fault in [Fault::Fail, Fault::FailAfter] {
            for nth in 1..=points {
                let what = format!("{work:?}: {fault:?} at operation {nth} of {points}");
                let (raw, result, _) = key_work_store(work, Some((nth, fault))).await;
                if let Err(e) = &result {
                    assert!(injected(e).is_some(), "{what}: a non-injected error: {e:?}");
                    failed += 1;
                }
                let client = open(Backend::ObjectStore(raw.clone()), None)
                    .await
                    .unwrap_or_else(|e| panic!("{what}: the store does not open: {e:?}"));
                let mut found = verify(&client).await.unwrap_or_else(|e| panic!("{what}: verification fails: {e:?}"));
                // A rotation recorded (or not) is a commit with the same files.
                found.generation = expected.generation;
                assert_eq!(found, expected, "{what}: the files changed");
                check(&client).await;
                // Run again: it completes, and leaves nothing under an older epoch.
                match work {
                    KeyWork::Rotate => {
                        rotate(raw.clone()).await.unwrap_or_else(|e| panic!("{what}: rotating again: {e:?}"));
                    }
                    KeyWork::Reseal => {
                        let options = memfs_store::ResealOptions { history: true };
                        client.reseal(options, &()).await.unwrap_or_else(|e| panic!("{what}: resealing again: {e:?}"));
                        let again = client.reseal(options, &()).await.unwrap();
                        assert_eq!(again.resealed, 0, "{what}: a second reseal found work");
                    }
                }
                let last = open(Backend::ObjectStore(raw), None).await.unwrap();
                let mut after = verify(&last).await.unwrap();
                after.generation = expected.generation;
                assert_eq!(after, expected, "{what}: the files changed after finishing");
                check(&last).await;
            }
        }
        report.push(format!("{work:?}: {points} operations, {} runs, {failed} reported failure", 2 * points));
    }
    eprintln!("crash of key work: {}", report.join("; "));
}
