//! Graphs on tokio: two DMA copies in a chain (A -> B, then B -> C) and a user node
//! after them that checks C, run three times as awaited graph instances.

use doca_core::aio::AsyncWorkQ;
use doca_core::{Graph, NodeState, Result, WorkQ, devinfo_list};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use doca_examples::local_memory;

const SIZE: usize = 4096;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let dev = devinfo_list()?[0].open()?;
    let (mmap, inv) = local_memory(&dev, 3 * SIZE, 8)?;
    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev)?;
    dma.as_ctx().start()?;
    let wq = AsyncWorkQ::new(WorkQ::new(16)?)?;
    wq.attach(dma.as_ctx())?;

    let g = Graph::new();
    let first = g.ctx_node_create(JOB_MEMCPY, dma.as_ctx())?;
    let second = g.ctx_node_create(JOB_MEMCPY, dma.as_ctx())?;
    let check = g.user_node_create(move |view, round| {
        // The second copy's destination (C) holds this round's bytes.
        let c = view
            .record(second)?
            .and_then(|r| r.buf(MemcpyJob::DST).map(|b| b.data_to_vec()))
            .unwrap_or_default();
        if c.len() == SIZE && c.iter().all(|&b| b == round.u64() as u8) {
            Ok(())
        } else {
            Err(doca_core::Error::with_context(
                doca_core::ErrorCode::Unexpected,
                "C does not hold what A held",
            ))
        }
    })?;
    g.add_dependency(first, second)?;
    g.add_dependency(second, check)?;
    g.start()?;
    wq.graph_add(&g)?;

    let mut inst = g.instance_create()?;
    for round in 1..=3u8 {
        let mut a = inv.buf_at(&mmap, 0, SIZE)?;
        a.write_data(&[round; SIZE])?;
        // B as the first copy's destination, and (a view of the same bytes, full) as
        // the second copy's source: the chain runs the second after the first.
        let b_dst = inv.buf_at(&mmap, SIZE, SIZE)?;
        let b_src = inv.buf_with_data_at(&mmap, SIZE, SIZE)?;
        let c = inv.buf_at(&mmap, 2 * SIZE, SIZE)?;
        inst.set_ctx_node_data(first, MemcpyJob::new(a, b_dst, 1))?;
        inst.set_ctx_node_data(second, MemcpyJob::new(b_src, c, 2))?;
        inst.set_user_node_data(check, u64::from(round))?;
        let done = wq
            .submit_graph(inst, u64::from(round))
            .map_err(|(e, _)| e)?
            .await;
        done.status()?;
        assert_eq!(done.event().user_data.u64(), u64::from(round));
        inst = done.graph_instance.expect("the instance comes back");
        assert_eq!(inst.node_state(check)?, NodeState::Completed);
    }
    println!("graph: 3 instances of copy -> copy -> check ran in order");
    drop(inst);
    wq.graph_rm(&g)?;
    wq.detach(dma.as_ctx())?;
    Ok(())
}
