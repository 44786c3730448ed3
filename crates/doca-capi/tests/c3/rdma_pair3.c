/*
 * Two processes of DOCA 3.x RDMA, written as DOCA's samples write them: descriptors
 * pass through files in a directory both sides see (as a user copies them), and each
 * side drives its progress engine.
 *
 *   rdma_pair3 server DIR    exports memory (read-write-atomic and read-only) and a
 *                            sync event, posts receives, checks what the client did,
 *                            then stops its memory (revocation)
 *   rdma_pair3 client DIR    every task type against it, and the refusals: a
 *                            permission the export does not grant, a damaged
 *                            descriptor, memory after its revocation
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_sync_event.h>

#include "common3.h"
#include "../c/pair_files.h"
#include "rdma_common3.h"

#define MEM_LEN (16 * 1024)
#define NUM_TASKS 4

static struct doca_rdma *make_rdma(struct doca_dev *dev, struct doca_pe *pe)
{
	struct doca_rdma *rdma;

	CHECK(doca_rdma_create(dev, &rdma));
	CHECK(doca_rdma_set_permissions(rdma,
					DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
						DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC));
	CHECK(doca_rdma_task_receive_set_conf(rdma, CB(receive), CB(receive), NUM_TASKS));
	CHECK(doca_rdma_task_send_set_conf(rdma, CB(send), CB(send), NUM_TASKS));
	CHECK(doca_rdma_task_send_imm_set_conf(rdma, CB(send_imm), CB(send_imm), NUM_TASKS));
	CHECK(doca_rdma_task_read_set_conf(rdma, CB(read), CB(read), NUM_TASKS));
	CHECK(doca_rdma_task_write_set_conf(rdma, CB(write), CB(write), NUM_TASKS));
	CHECK(doca_rdma_task_write_imm_set_conf(rdma, CB(write_imm), CB(write_imm), NUM_TASKS));
	CHECK(doca_rdma_task_atomic_cmp_swp_set_conf(rdma, CB(atomic_cmp_swp), CB(atomic_cmp_swp), NUM_TASKS));
	CHECK(doca_rdma_task_atomic_fetch_add_set_conf(rdma, CB(atomic_fetch_add), CB(atomic_fetch_add), NUM_TASKS));
	CHECK(doca_rdma_task_remote_net_sync_event_get_set_conf(rdma, CB(remote_net_sync_event_get),
								 CB(remote_net_sync_event_get), NUM_TASKS));
	CHECK(doca_rdma_task_remote_net_sync_event_notify_set_set_conf(
		rdma, CB(remote_net_sync_event_notify_set), CB(remote_net_sync_event_notify_set), NUM_TASKS));
	CHECK(doca_rdma_task_remote_net_sync_event_notify_add_set_conf(
		rdma, CB(remote_net_sync_event_notify_add), CB(remote_net_sync_event_notify_add), NUM_TASKS));
	CHECK(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(rdma)));
	CHECK(doca_ctx_start(doca_rdma_as_ctx(rdma)));
	return rdma;
}

static int server(void)
{
	struct doca_dev *dev = open_rdma_device();
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_rdma_connection *conn;
	struct doca_mmap *mem_mmap, *ro_mmap, *recv_mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *rbuf[2];
	struct doca_rdma_task_receive *recv[2];
	struct doca_sync_event *event;
	struct result rres[2] = {{0}};
	uint8_t *mem = calloc(1, MEM_LEN), *ro = calloc(1, 4096), *rmem = calloc(1, 4096);
	const void *desc;
	size_t desc_len, i;
	const uint8_t *ev_desc;
	size_t ev_len;
	char peer[4096];
	size_t peer_len;
	union doca_data ud;
	uint64_t v;

	ASSERT(mem && ro && rmem);
	for (i = 0; i < 4096; i++)
		ro[i] = (uint8_t)i;
	mem_mmap = make_mmap(dev, mem, MEM_LEN,
			     DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
				     DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC);
	ro_mmap = make_mmap(dev, ro, 4096, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ);
	recv_mmap = make_mmap(dev, rmem, 4096, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	CHECK(doca_mmap_export_rdma(mem_mmap, dev, &desc, &desc_len));
	put_file("mmap", desc, desc_len);
	CHECK(doca_mmap_export_rdma(ro_mmap, dev, &desc, &desc_len));
	put_file("mmap_ro", desc, desc_len);

	CHECK(doca_sync_event_create(&event));
	CHECK(doca_sync_event_add_publisher_location_remote_net(event));
	CHECK(doca_sync_event_add_subscriber_location_cpu(event, dev));
	CHECK(doca_sync_event_start(event));
	CHECK(doca_sync_event_export_to_remote_net(event, &ev_desc, &ev_len));
	put_file("event", ev_desc, ev_len);

	CHECK(doca_pe_create(&pe));
	rdma = make_rdma(dev, pe);
	CHECK(doca_rdma_export(rdma, &desc, &desc_len, &conn));
	put_file("server_conn", desc, desc_len);
	peer_len = get_file("client_conn", peer, sizeof(peer));
	CHECK(doca_rdma_connect(rdma, peer, peer_len, conn));

	/* Two receives: a send with immediate, then a write's immediate (no data). */
	CHECK(doca_buf_inventory_create(8, &inv));
	CHECK(doca_buf_inventory_start(inv));
	for (i = 0; i < 2; i++) {
		CHECK(doca_buf_inventory_buf_get_by_addr(inv, recv_mmap, rmem + i * 2048, 2048, &rbuf[i]));
		ud.ptr = &rres[i];
		CHECK(doca_rdma_task_receive_allocate_init(rdma, rbuf[i], ud, &recv[i]));
		CHECK(doca_task_submit(doca_rdma_task_receive_as_task(recv[i])));
	}
	wait_for(pe, &rres[0]);
	wait_for(pe, &rres[1]);
	CHECK(rres[0].status);
	CHECK(rres[1].status);
	ASSERT(doca_rdma_task_receive_get_result_opcode(recv[0]) == DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM);
	ASSERT(doca_rdma_task_receive_get_result_immediate_data(recv[0]) == 0x1234);
	ASSERT(doca_rdma_task_receive_get_result_len(recv[0]) == 6);
	ASSERT(strcmp((char *)rmem, "hello") == 0);
	ASSERT(doca_rdma_task_receive_get_result_rdma_connection(recv[0]) == conn);
	ASSERT(doca_rdma_task_receive_get_result_opcode(recv[1]) == DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM);
	ASSERT(doca_rdma_task_receive_get_result_immediate_data(recv[1]) == 7);

	/* The client sets the event to 10 and adds 5: wait for it, as the samples do. */
	CHECK(doca_sync_event_wait_gt(event, 14, UINT64_MAX));
	CHECK(doca_sync_event_get(event, &v));
	ASSERT(v == 15);

	/* What the client wrote and updated atomically. */
	for (i = 0; i < 4096; i++)
		if (i < 1024 || i >= 1040)
			ASSERT(mem[i] == pattern(i));
	memcpy(&v, mem + 1024, 8);
	ASSERT(v == 99);
	for (i = 0; i < 16; i++)
		ASSERT(mem[2048 + 4096 + i] == (uint8_t)(0xa0 + i));
	printf("server: everything arrived\n");

	/* Revocation: the client's later accesses are refused. */
	CHECK(doca_mmap_stop(mem_mmap));
	put_file("revoked", "1", 1);
	get_file("client_done", peer, sizeof(peer));

	for (i = 0; i < 2; i++) {
		doca_task_free(doca_rdma_task_receive_as_task(recv[i]));
		CHECK(doca_buf_dec_refcount(rbuf[i], NULL));
	}
	CHECK(doca_ctx_stop(doca_rdma_as_ctx(rdma)));
	CHECK(doca_rdma_destroy(rdma));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_sync_event_stop(event));
	CHECK(doca_sync_event_destroy(event));
	CHECK(doca_mmap_destroy(mem_mmap));
	CHECK(doca_mmap_stop(ro_mmap));
	CHECK(doca_mmap_destroy(ro_mmap));
	CHECK(doca_mmap_stop(recv_mmap));
	CHECK(doca_mmap_destroy(recv_mmap));
	CHECK(doca_dev_close(dev));
	free(mem);
	free(ro);
	free(rmem);
	printf("server: done\n");
	return 0;
}

static int client(void)
{
	struct doca_dev *dev = open_rdma_device();
	struct doca_pe *pe;
	struct doca_rdma *rdma;
	struct doca_rdma_connection *conn;
	struct doca_mmap *local, *remote, *remote_ro, *bad;
	struct doca_sync_event_remote_net *event;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst, *rsrc, *rdst, *res;
	struct result r;
	union doca_data ud;
	uint8_t *mem = calloc(1, MEM_LEN);
	char desc_buf[4096], mmap_desc[4096], ro_desc[4096], ev_desc[256];
	size_t desc_len, mmap_len, ro_len, ev_len, i;
	const void *mine;
	size_t mine_len;
	void *rbase;
	size_t rlen;
	uint64_t v;

	ASSERT(mem != NULL);
	CHECK(doca_pe_create(&pe));
	rdma = make_rdma(dev, pe);
	CHECK(doca_rdma_export(rdma, &mine, &mine_len, &conn));
	put_file("client_conn", mine, mine_len);
	desc_len = get_file("server_conn", desc_buf, sizeof(desc_buf));
	mmap_len = get_file("mmap", mmap_desc, sizeof(mmap_desc));
	ro_len = get_file("mmap_ro", ro_desc, sizeof(ro_desc));
	ev_len = get_file("event", ev_desc, sizeof(ev_desc));

	/* A damaged descriptor is refused, and the connection stays free for the good one. */
	desc_buf[desc_len / 2] ^= 0x40;
	ASSERT(doca_rdma_connect(rdma, desc_buf, desc_len, conn) == DOCA_ERROR_CONNECTION_ABORTED);
	desc_buf[desc_len / 2] ^= 0x40;
	CHECK(doca_rdma_connect(rdma, desc_buf, desc_len, conn));
	ASSERT(doca_rdma_connect(rdma, desc_buf, desc_len, conn) == DOCA_ERROR_BAD_STATE);

	local = make_mmap(dev, mem, MEM_LEN, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	CHECK(doca_mmap_create_from_export(NULL, mmap_desc, mmap_len, dev, &remote));
	CHECK(doca_mmap_create_from_export(NULL, ro_desc, ro_len, dev, &remote_ro));
	mmap_desc[20] ^= 1;
	ASSERT(doca_mmap_create_from_export(NULL, mmap_desc, mmap_len, dev, &bad) == DOCA_ERROR_INVALID_VALUE);
	mmap_desc[20] ^= 1;
	CHECK(doca_sync_event_remote_net_create_from_export(dev, (const uint8_t *)ev_desc, ev_len, &event));
	CHECK(doca_mmap_get_memrange(remote, &rbase, &rlen));
	ASSERT(rlen == MEM_LEN);
	CHECK(doca_buf_inventory_create(16, &inv));
	CHECK(doca_buf_inventory_start(inv));

	/* Write 4 KiB, then read it back elsewhere. */
	for (i = 0; i < 4096; i++)
		mem[i] = pattern(i);
	CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mem, 4096, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(inv, remote, rbase, 4096, &rdst));
	memset(&r, 0, sizeof(r));
	ud.ptr = &r;
	{
		struct doca_rdma_task_write *t;

		CHECK(doca_rdma_task_write_allocate_init(rdma, conn, src, rdst, ud, &t));
		CHECK(doca_task_submit(doca_rdma_task_write_as_task(t)));
		wait_for(pe, &r);
		CHECK(r.status);
		doca_task_free(doca_rdma_task_write_as_task(t));
	}
	CHECK(doca_buf_inventory_buf_get_by_data(inv, remote, rbase, 4096, &rsrc));
	CHECK(doca_buf_inventory_buf_get_by_addr(inv, local, mem + 8192, 4096, &dst));
	memset(&r, 0, sizeof(r));
	{
		struct doca_rdma_task_read *t;

		CHECK(doca_rdma_task_read_allocate_init(rdma, conn, rsrc, dst, ud, &t));
		CHECK(doca_task_submit(doca_rdma_task_read_as_task(t)));
		wait_for(pe, &r);
		CHECK(r.status);
		ASSERT(doca_rdma_task_read_get_result_len(t) == 4096);
		doca_task_free(doca_rdma_task_read_as_task(t));
	}
	ASSERT(memcmp(mem, mem + 8192, 4096) == 0);

	/* Atomics on the 8 bytes at 1024: fetch-and-add, then compare-and-swap. */
	{
		struct doca_rdma_task_atomic_fetch_add *fa;
		struct doca_rdma_task_atomic_cmp_swp *cs;
		struct doca_buf *target;
		uint64_t before;

		memcpy(&before, mem + 1024, 8);
		CHECK(doca_buf_inventory_buf_get_by_data(inv, remote, (uint8_t *)rbase + 1024, 8, &target));
		CHECK(doca_buf_inventory_buf_get_by_addr(inv, local, mem + 12288, 8, &res));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_atomic_fetch_add_allocate_init(rdma, conn, target, res, 5, ud, &fa));
		CHECK(doca_task_submit(doca_rdma_task_atomic_fetch_add_as_task(fa)));
		wait_for(pe, &r);
		CHECK(r.status);
		memcpy(&v, mem + 12288, 8);
		ASSERT(v == before);
		doca_task_free(doca_rdma_task_atomic_fetch_add_as_task(fa));
		CHECK(doca_buf_reset_data_len(res));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_atomic_cmp_swp_allocate_init(rdma, conn, target, res, before + 5, 99, ud, &cs));
		CHECK(doca_task_submit(doca_rdma_task_atomic_cmp_swp_as_task(cs)));
		wait_for(pe, &r);
		CHECK(r.status);
		doca_task_free(doca_rdma_task_atomic_cmp_swp_as_task(cs));
		CHECK(doca_buf_dec_refcount(target, NULL));
		CHECK(doca_buf_dec_refcount(res, NULL));
	}

	/* A send with immediate data, then a write with immediate data. */
	{
		struct doca_rdma_task_send_imm *t;
		struct doca_rdma_task_write_imm *w;
		struct doca_buf *msg, *wsrc, *wdst;

		strcpy((char *)mem + 4096, "hello");
		CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mem + 4096, 6, &msg));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_send_imm_allocate_init(rdma, conn, msg, 0x1234, ud, &t));
		CHECK(doca_task_submit(doca_rdma_task_send_imm_as_task(t)));
		wait_for(pe, &r);
		CHECK(r.status);
		doca_task_free(doca_rdma_task_send_imm_as_task(t));
		CHECK(doca_buf_dec_refcount(msg, NULL));
		for (i = 0; i < 16; i++)
			mem[4200 + i] = (uint8_t)(0xa0 + i);
		CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mem + 4200, 16, &wsrc));
		CHECK(doca_buf_inventory_buf_get_by_addr(inv, remote, (uint8_t *)rbase + 2048 + 4096, 16, &wdst));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_write_imm_allocate_init(rdma, conn, wsrc, wdst, 7, ud, &w));
		CHECK(doca_task_submit(doca_rdma_task_write_imm_as_task(w)));
		wait_for(pe, &r);
		CHECK(r.status);
		doca_task_free(doca_rdma_task_write_imm_as_task(w));
		CHECK(doca_buf_dec_refcount(wsrc, NULL));
		CHECK(doca_buf_dec_refcount(wdst, NULL));
	}

	/* A write into memory exported read-only fails, and nothing is written. */
	{
		struct doca_rdma_task_write *t;
		struct doca_buf *rodst, *small;
		void *robase;
		size_t rolen;

		CHECK(doca_mmap_get_memrange(remote_ro, &robase, &rolen));
		CHECK(doca_buf_inventory_buf_get_by_addr(inv, remote_ro, robase, 16, &rodst));
		CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mem + 4200, 16, &small));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_write_allocate_init(rdma, conn, small, rodst, ud, &t));
		CHECK(doca_task_submit(doca_rdma_task_write_as_task(t)));
		wait_for(pe, &r);
		ASSERT(r.status == DOCA_ERROR_NOT_PERMITTED);
		doca_task_free(doca_rdma_task_write_as_task(t));
		CHECK(doca_buf_dec_refcount(rodst, NULL));
		CHECK(doca_buf_dec_refcount(small, NULL));
	}

	/* The server's sync event: set 10, add 5 (the result buffer gets 10), read 15. */
	{
		struct doca_rdma_task_remote_net_sync_event_notify_set *s;
		struct doca_rdma_task_remote_net_sync_event_notify_add *a;
		struct doca_rdma_task_remote_net_sync_event_get *g;
		struct doca_buf *val, *out;

		v = 10;
		memcpy(mem + 12400, &v, 8);
		CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mem + 12400, 8, &val));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(rdma, conn, event, val, ud, &s));
		CHECK(doca_task_submit(doca_rdma_task_remote_net_sync_event_notify_set_as_task(s)));
		wait_for(pe, &r);
		CHECK(r.status);
		doca_task_free(doca_rdma_task_remote_net_sync_event_notify_set_as_task(s));
		CHECK(doca_buf_inventory_buf_get_by_addr(inv, local, mem + 12500, 8, &out));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_remote_net_sync_event_get_allocate_init(rdma, conn, event, out, ud, &g));
		CHECK(doca_task_submit(doca_rdma_task_remote_net_sync_event_get_as_task(g)));
		wait_for(pe, &r);
		CHECK(r.status);
		memcpy(&v, mem + 12500, 8);
		ASSERT(v == 10);
		doca_task_free(doca_rdma_task_remote_net_sync_event_get_as_task(g));
		CHECK(doca_buf_reset_data_len(out));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(rdma, conn, event, out, 5, ud, &a));
		CHECK(doca_task_submit(doca_rdma_task_remote_net_sync_event_notify_add_as_task(a)));
		wait_for(pe, &r);
		CHECK(r.status);
		memcpy(&v, mem + 12500, 8);
		ASSERT(v == 10);
		doca_task_free(doca_rdma_task_remote_net_sync_event_notify_add_as_task(a));
		CHECK(doca_buf_dec_refcount(val, NULL));
		CHECK(doca_buf_dec_refcount(out, NULL));
	}

	/* Once the server stopped its memory, reads of it are refused. */
	get_file("revoked", desc_buf, sizeof(desc_buf));
	{
		struct doca_rdma_task_read *t;

		CHECK(doca_buf_reset_data_len(dst));
		memset(&r, 0, sizeof(r));
		CHECK(doca_rdma_task_read_allocate_init(rdma, conn, rsrc, dst, ud, &t));
		CHECK(doca_task_submit(doca_rdma_task_read_as_task(t)));
		wait_for(pe, &r);
		ASSERT(r.status == DOCA_ERROR_NOT_FOUND);
		doca_task_free(doca_rdma_task_read_as_task(t));
	}
	printf("client: every task type ran, and the refusals came\n");
	put_file("client_done", "1", 1);

	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	CHECK(doca_buf_dec_refcount(rsrc, NULL));
	CHECK(doca_buf_dec_refcount(rdst, NULL));
	CHECK(doca_ctx_stop(doca_rdma_as_ctx(rdma)));
	CHECK(doca_rdma_destroy(rdma));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_sync_event_remote_net_destroy(event));
	CHECK(doca_mmap_destroy(remote));
	CHECK(doca_mmap_destroy(remote_ro));
	CHECK(doca_mmap_stop(local));
	CHECK(doca_mmap_destroy(local));
	CHECK(doca_dev_close(dev));
	free(mem);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s server|client DIR\n", argv[0]);
		return 2;
	}
	dir = argv[2];
	if (strcmp(argv[1], "server") == 0)
		return server();
	return client();
}
