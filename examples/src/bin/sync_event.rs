//! Sync events on tokio: one task waits for the event to pass 9 while another raises
//! it by 1 ten times, each raise an awaited job; the waiting task sleeps in epoll
//! between raises.

use doca_core::aio::AsyncWorkQ;
use doca_core::{Result, SyncEvent, SyncEventJob, WorkQ, devinfo_list};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dev = devinfo_list()?[0].open()?;
    let event = Arc::new(SyncEvent::new());
    event.publisher_add_location_cpu(&dev)?;
    event.subscriber_add_location_cpu(&dev)?;
    event.as_ctx().start()?;
    let wq = Arc::new(AsyncWorkQ::new(WorkQ::new(16)?)?);
    wq.attach(event.as_ctx())?;

    let raiser = {
        let (event, wq) = (Arc::clone(&event), Arc::clone(&wq));
        tokio::spawn(async move {
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let add = wq.submit_job(event.as_ctx(), SyncEventJob::update_add(1, 0));
                add.map_err(|(e, _)| e)?.await.status()?;
            }
            Ok::<(), doca_core::Error>(())
        })
    };
    let t = Instant::now();
    wq.sync_event_wait_gt(&event, 9, u64::MAX).await?;
    raiser.await.expect("raiser task")?;
    let get = wq.submit_job(event.as_ctx(), SyncEventJob::get(0));
    let done = get.map_err(|(e, _)| e)?.await;
    let value = SyncEventJob::result_value(&done);
    assert_eq!(value, 10);
    println!(
        "sync_event: the wait for > 9 passed after {} ms; the value is {value}",
        t.elapsed().as_millis()
    );
    wq.detach(event.as_ctx())?;
    event.as_ctx().stop()?;
    Ok(())
}
