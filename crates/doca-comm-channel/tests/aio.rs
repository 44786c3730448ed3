//! The comm channel awaited on tokio: a service that waits before its client exists is
//! woken by the connection and its first message; 300 echoes in order; a receive
//! cancelled by a timeout loses nothing; a client that goes away is reported. A comch
//! context, whose callbacks run from the engine's progress, is refused by an `AsyncPe`.

#![cfg(feature = "tokio")]

use doca_comm_channel::Endpoint;
use doca_comm_channel::aio::AsyncEndpoint;
use doca_core::ErrorCode;
use std::time::Duration;

mod common;
use common::device;

#[test]
fn echo_service_on_tokio() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let name = format!("aio-echo-{}", std::process::id());
    rt.block_on(async {
        let dpu = device("dpu", "0000:03:00.0");
        let mut ep = Endpoint::new();
        ep.set_device(&dpu).unwrap();
        ep.set_device_rep(&dpu.open_rep("0000:3b:00.0").unwrap())
            .unwrap();
        ep.listen(&name).unwrap();
        let mut server = AsyncEndpoint::new(ep).unwrap();

        // A receive with nothing to receive, cancelled: nothing is lost by it.
        let mut buf = [0u8; 4080];
        assert!(
            tokio::time::timeout(Duration::from_millis(20), server.recv_from(&mut buf))
                .await
                .is_err()
        );

        let service = tokio::spawn(async move {
            let mut buf = [0u8; 4080];
            let mut echoed = 0u32;
            loop {
                match server.recv_from(&mut buf).await {
                    Ok((n, from)) => {
                        let mut reply = b"echo:".to_vec();
                        reply.extend_from_slice(&buf[..n]);
                        server.send_to(&reply, from).await.unwrap();
                        echoed += 1;
                    }
                    Err((e, peer)) => {
                        assert_eq!(e.code(), ErrorCode::NotConnected, "{e}");
                        assert!(peer.is_some());
                        return echoed;
                    }
                }
            }
        });

        // The client comes later; the service sleeps in epoll meanwhile.
        tokio::time::sleep(Duration::from_millis(30)).await;
        let mut ep = Endpoint::new();
        ep.set_device(&device("host", "0000:3b:00.0")).unwrap();
        let to = ep.connect(&name).unwrap();
        let mut client = AsyncEndpoint::new(ep).unwrap();
        let mut buf = [0u8; 4080];
        for i in 0..300u32 {
            let msg = format!("message {i}");
            client.send_to(msg.as_bytes(), to).await.unwrap();
            let (n, from) =
                tokio::time::timeout(Duration::from_secs(10), client.recv_from(&mut buf))
                    .await
                    .expect("the echo came")
                    .map_err(|(e, _)| e)
                    .unwrap();
            assert_eq!(from, to);
            assert_eq!(&buf[..n], format!("echo:{msg}").as_bytes());
        }
        drop(client);
        let echoed = tokio::time::timeout(Duration::from_secs(10), service)
            .await
            .expect("the service saw the client go")
            .unwrap();
        assert_eq!(echoed, 300);
    });
}

#[test]
fn an_async_progress_engine_refuses_comch() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let host = device("host", "0000:3b:00.0");
        let client = doca_comm_channel::comch::Comch::client(
            &host,
            &format!("aio-pe-{}", std::process::id()),
        )
        .unwrap();
        let pe = doca_core::aio::AsyncPe::new(doca_core::exec::Pe::new().unwrap(), 4).unwrap();
        let e = pe.connect_and_start(client.ctx()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotSupported);
    });
}
