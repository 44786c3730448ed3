//! A graph instance of 3 DMA copy nodes in a chain against submitting the same 3 jobs
//! by hand (each after the previous completed), in the same run.

use crate::ec::{Runner, measure_all};
use clap::Args;
use doca_core::{Buf, Graph, GraphInstance, WorkQ, devinfo_list};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct GraphArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Target duration of one sample, in milliseconds.
    #[arg(long, default_value_t = 40)]
    sample_ms: u64,
    /// Bytes each job copies.
    #[arg(long, default_value_t = 4096)]
    bytes: usize,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
}

pub fn run(a: &GraphArgs) {
    let (reps, sample) = if a.quick {
        (3, Duration::from_millis(5))
    } else {
        (a.reps.max(1), Duration::from_millis(a.sample_ms))
    };
    let n = a.bytes.max(1);
    let dev = devinfo_list().expect("devices")[0].open().expect("open");
    let (mmap, inv) = doca_tools::local_memory(&dev, vec![5u8; 12 * n], 16).expect("memory");
    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev).expect("dev_add");
    dma.as_ctx().start().expect("start");
    let mut wq = WorkQ::new(16).expect("workq");
    dma.as_ctx().workq_add(&mut wq).expect("workq_add");
    let pairs = |base: usize| -> Vec<(Buf, Buf)> {
        (0..3)
            .map(|i| {
                (
                    inv.buf_with_data_at(&mmap, (base + 2 * i) * n, n)
                        .expect("src"),
                    inv.buf_at(&mmap, (base + 2 * i + 1) * n, n).expect("dst"),
                )
            })
            .collect()
    };
    let mut by_hand = pairs(0);
    // Kept in one vector (no allocation per round, as by hand).
    let mut in_graph = pairs(6);

    let g = Graph::new();
    let nodes: Vec<_> = (0..3)
        .map(|_| g.ctx_node_create(JOB_MEMCPY, dma.as_ctx()).expect("node"))
        .collect();
    g.add_dependency(nodes[0], nodes[1]).expect("dependency");
    g.add_dependency(nodes[1], nodes[2]).expect("dependency");
    g.start().expect("graph start");
    g.workq_add(&wq).expect("graph workq_add");
    let mut inst: Option<GraphInstance> = Some(g.instance_create().expect("instance"));

    let wq = std::cell::RefCell::new(wq);
    let mut runners: Vec<Runner<'_>> = vec![
        Box::new(|| {
            let mut wq = wq.borrow_mut();
            for p in by_hand.iter_mut() {
                let (src, mut dst) = (
                    p.0.refcount_add().expect("ref"),
                    p.1.refcount_add().expect("ref"),
                );
                dst.reset_data_len();
                wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 0))
                    .map_err(|(e, _)| e)
                    .expect("submit");
                drop(wq.wait(Some(Duration::from_secs(10))).expect("job"));
            }
        }),
        Box::new(|| {
            let mut wq = wq.borrow_mut();
            let mut i = inst.take().expect("instance");
            for (node, (src, mut dst)) in nodes.iter().zip(in_graph.drain(..)) {
                dst.reset_data_len();
                i.set_ctx_node_data(*node, MemcpyJob::new(src, dst, 0))
                    .expect("node data");
            }
            wq.graph_submit(i, 1)
                .map_err(|(e, _)| e)
                .expect("graph submit");
            let mut c = wq.wait(Some(Duration::from_secs(10))).expect("graph");
            let mut i = c.graph_instance.take().expect("instance back");
            for node in &nodes {
                let src = i.take_node_buf(*node, MemcpyJob::SRC).expect("node");
                let dst = i.take_node_buf(*node, MemcpyJob::DST).expect("node");
                in_graph.push((src.expect("src"), dst.expect("dst")));
            }
            inst = Some(i);
        }),
    ];
    // "bytes" = 1 per round, so rates are rounds per ns.
    let r = measure_all(1, reps, sample, &mut runners);
    drop(runners);
    let (hand, graph) = (1.0 / r[0], 1.0 / r[1]);
    println!("median of {reps} samples; samples of each pair taken in turn\n");
    println!("| 3 DMA copies of {n} B in a chain | ns per round | overhead |");
    println!("|---|---|---|");
    println!("| by hand (submit, wait, x3) | {hand:.0} | |");
    println!(
        "| graph instance of 3 context nodes | {graph:.0} | {:+.1}% |",
        (graph / hand - 1.0) * 100.0
    );
    let mut wq = wq.into_inner();
    g.workq_rm(&wq).expect("graph workq_rm");
    dma.as_ctx().workq_rm(&mut wq).expect("workq_rm");
}
