//! The task generation's life cycle on the Rust face: task types configured on a
//! context, pooled tasks submitted to a progress engine and delivered with their
//! handler, results written back at delivery, tasks freed while in flight, and the
//! refusals of each step.

use doca_core::exec::{Delivered, Pe, PeEvent, Task, TaskTypes};
use doca_core::sync_event::tasks::{GET, NOTIFY_ADD, WAIT_GT, get, notify_add, wait_gt};
use doca_core::{Data, ErrorCode, SyncEvent, devinfo_list};
use std::cell::RefCell;
use std::ptr::NonNull;

/// What the tests' handler is: a tag, recorded with the status at delivery.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag(u32);

fn event() -> SyncEvent {
    let dev = devinfo_list().unwrap()[0].open().unwrap();
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(&dev).unwrap();
    se.subscriber_add_location_cpu(&dev).unwrap();
    se
}

/// Progresses until nothing happens, recording each delivered task's tag, status and
/// user data.
fn drain(pe: &Pe) -> Vec<(Tag, i32, u64)> {
    let out = RefCell::new(Vec::new());
    while pe.progress(|ev| {
        if let PeEvent::Task(mut c) = ev {
            // SAFETY: every completion here is of a pooled task of this test.
            let d: Option<Delivered<Tag>> = unsafe { Task::complete(&mut c) };
            if let Some(d) = d {
                out.borrow_mut()
                    .push((d.handler, d.status, d.task().user_data().u64()));
            }
        }
    }) {}
    out.into_inner()
}

#[test]
fn pooled_tasks_deliver_their_results_and_go_back_to_their_pools() {
    let se = event();
    let ctx = se.as_ctx();
    let types = TaskTypes::new(ctx);
    types.set_conf(&NOTIFY_ADD, Tag(1), 2).unwrap();
    types.set_conf(&GET, Tag(2), 1).unwrap();
    let pe = Pe::new().unwrap();
    pe.connect(ctx).unwrap();
    pe.start_ctx(ctx).unwrap();

    // notify_add writes the value before the add where the task says, at delivery.
    let mut before = u64::MAX;
    let add = types
        .alloc(&NOTIFY_ADD, Data(10), |t| {
            t.params[notify_add::inc_val].set(5);
            t.params[notify_add::fetched_val_ptr].set(&raw mut before as usize as u64);
            Ok(())
        })
        .unwrap();
    // SAFETY: a task of `types` with no buffers.
    unsafe { pe.submit_task(ctx, add) }.unwrap();
    // SAFETY: the task is ours; reading its status is allowed while submitted.
    assert!(unsafe { add.as_ref() }.is_submitted());
    assert_eq!(drain(&pe), vec![(Tag(1), 0, 10)]);
    assert_eq!(before, 0, "the value before the add, written at delivery");

    let mut value = 0u64;
    let g = types
        .alloc(&GET, Data(11), |t| {
            t.params[get::ret_val_ptr].set(&raw mut value as usize as u64);
            Ok(())
        })
        .unwrap();
    // SAFETY: as above.
    unsafe { pe.submit_task(ctx, g) }.unwrap();
    assert_eq!(drain(&pe), vec![(Tag(2), 0, 11)]);
    assert_eq!(value, 5);

    // The pool of one is empty while its task is taken.
    let e = types.alloc(&GET, Data(0), |_| Ok(())).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NoMemory);
    // A type with tasks taken cannot be configured again.
    assert_eq!(
        types.set_conf(&GET, Tag(3), 4).unwrap_err().code(),
        ErrorCode::BadState
    );
    types.free(g).unwrap();
    assert_eq!(
        types.free(g).unwrap_err().code(),
        ErrorCode::InvalidValue,
        "freed twice"
    );
    types.free(add).unwrap();
    assert_eq!(types.outstanding(), 0);
    pe.stop_ctx(ctx).unwrap();
    types.clear().unwrap();
}

#[test]
fn a_task_freed_in_flight_goes_back_unreported_and_stop_waits_for_it() {
    let se = event();
    let ctx = se.as_ctx();
    let types = TaskTypes::new(ctx);
    types.set_conf(&WAIT_GT, Tag(7), 2).unwrap();
    let pe = Pe::new().unwrap();
    pe.connect(ctx).unwrap();
    pe.start_ctx(ctx).unwrap();

    // A wait that cannot pass yet stays in flight.
    let w = types
        .alloc(&WAIT_GT, Data(1), |t| {
            t.params[wait_gt::wait_val].set(3);
            t.params[wait_gt::mask].set(0xff);
            Ok(())
        })
        .unwrap();
    // SAFETY: a task of `types` with no buffers.
    unsafe { pe.submit_task(ctx, w) }.unwrap();
    assert!(drain(&pe).is_empty());
    // Freed while in flight: it stays taken until it completes.
    types.free(w).unwrap();
    assert_eq!(types.outstanding(), 1);
    assert_eq!(
        types.clear().unwrap_err().code(),
        ErrorCode::BadState,
        "the context still runs"
    );
    // Stopping flushes it; nobody is told, and it is back in its pool.
    assert_eq!(pe.stop_ctx(ctx).unwrap_err().code(), ErrorCode::InProgress);
    let told = drain(&pe);
    assert!(told.is_empty(), "a freed task is not reported: {told:?}");
    assert_eq!(types.outstanding(), 0);
    types.clear().unwrap();
}

#[test]
fn refusals_leave_the_task_as_it_was() {
    let se = event();
    let ctx = se.as_ctx();
    let types: Box<TaskTypes<Tag>> = TaskTypes::new(ctx);
    assert_eq!(
        types.set_conf(&GET, Tag(0), 0).unwrap_err().code(),
        ErrorCode::InvalidValue,
        "a pool of no tasks"
    );
    types.set_conf(&GET, Tag(0), 1).unwrap();
    // Not running: no task is handed out.
    assert_eq!(
        types.alloc(&GET, Data(0), |_| Ok(())).unwrap_err().code(),
        ErrorCode::BadState
    );
    assert_eq!(
        types
            .alloc(&NOTIFY_ADD, Data(0), |_| Ok(()))
            .unwrap_err()
            .code(),
        ErrorCode::BadState,
        "a type not configured"
    );
    let pe = Pe::new().unwrap();
    pe.connect(ctx).unwrap();
    pe.start_ctx(ctx).unwrap();
    // An init that refuses gives the task back.
    let e = types
        .alloc(&GET, Data(0), |_| {
            Err(doca_core::Error::new(ErrorCode::InvalidValue))
        })
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidValue);
    assert_eq!(types.outstanding(), 0);
    let t: NonNull<Task<Tag>> = types.alloc(&GET, Data(0), |_| Ok(())).unwrap();
    // A task of another set is not this set's to free.
    let other: Box<TaskTypes<Tag>> = TaskTypes::new(ctx);
    assert_eq!(other.free(t).unwrap_err().code(), ErrorCode::InvalidValue);
    types.free(t).unwrap();
    pe.stop_ctx(ctx).unwrap();
}
