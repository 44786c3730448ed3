//! The comm channel on tokio: a DPU-side service and a host-side client (two
//! endpoints of this process; DOCA programs run them as two processes) exchange 100
//! messages, each side awaiting its receives; the service sees the client leave.

use doca_comm_channel::Endpoint;
use doca_comm_channel::aio::AsyncEndpoint;
use doca_core::device::{DEFAULT_MACHINE, Topology};
use doca_core::{Dev, ErrorCode, Result};

/// The device of `role`'s side of the default machine at `pci`.
fn device(role: &str, pci: &str) -> Result<Dev> {
    Topology::from_toml(DEFAULT_MACHINE, Some(role))?.open_device(pci)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let name = format!("example-echo-{}", std::process::id());
    let dpu = device("dpu", "0000:03:00.0")?;
    let rep = dpu.open_rep("0000:3b:00.0")?;
    let mut ep = Endpoint::new();
    ep.set_device(&dpu)?;
    ep.set_device_rep(&rep)?;
    ep.listen(&name)?;
    let mut service = AsyncEndpoint::new(ep)?;
    let server = tokio::spawn(async move {
        let mut buf = [0u8; 4080];
        let mut n_msgs = 0u32;
        loop {
            match service.recv_from(&mut buf).await {
                Ok((n, from)) => {
                    let reply: Vec<u8> = buf[..n].iter().rev().copied().collect();
                    service.send_to(&reply, from).await?;
                    n_msgs += 1;
                }
                Err((e, _)) if e.code() == ErrorCode::NotConnected => return Ok(n_msgs),
                Err((e, _)) => return Err(e),
            }
        }
    });

    let mut ep = Endpoint::new();
    ep.set_device(&device("host", "0000:3b:00.0")?)?;
    let to = ep.connect(&name)?;
    let mut client = AsyncEndpoint::new(ep)?;
    let mut buf = [0u8; 4080];
    for i in 0..100 {
        let msg = format!("message number {i}");
        client.send_to(msg.as_bytes(), to).await?;
        let (n, _) = client.recv_from(&mut buf).await.map_err(|(e, _)| e)?;
        let back: Vec<u8> = buf[..n].iter().rev().copied().collect();
        assert_eq!(back, msg.as_bytes());
    }
    drop(client);
    let served = server.await.expect("service task")?;
    println!("comm_channel: {served} messages answered; the service saw the client leave");
    Ok(())
}
