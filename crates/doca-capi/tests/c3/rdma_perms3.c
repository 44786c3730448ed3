/*
 * Both layers of RDMA access control, as a NIC checks them, in DOCA 3.x as the samples
 * write it: a remote read, write or atomic lands only where the responder's exported
 * memory (doca_mmap_set_permissions) AND its RDMA context (doca_rdma_set_permissions)
 * allow it; a remote-net sync event's set, add and get only where the context allows a
 * write, an atomic and a read. Everything else ends with DOCA_ERROR_NOT_PERMITTED,
 * touches nothing, and both sides go on working.
 *
 *   rdma_perms3 responder DIR   eight rounds, one per set of context permissions (every
 *                               combination of RDMA read, write and atomic); memory
 *                               exported with every combination of the same flags
 *                               (none: not exported at all);
 *                               after each round, checks byte by byte what landed
 *   rdma_perms3 requester DIR   every operation on every memory in every round, each
 *                               checked against what both layers allow
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
#include "../c/perm_matrix.h"
#include "rdma_common3.h"

/* The DOCA flags of combination k (bit 0 read, bit 1 write, bit 2 atomic). */
static uint32_t flags_of(int k)
{
	return ((k & 1) ? DOCA_ACCESS_FLAG_RDMA_READ : 0) | ((k & 2) ? DOCA_ACCESS_FLAG_RDMA_WRITE : 0) |
	       ((k & 4) ? DOCA_ACCESS_FLAG_RDMA_ATOMIC : 0);
}

/* A context as the samples make one: the responder's with only the RDMA flags it
 * grants (rdma_write_responder passes DOCA_ACCESS_FLAG_RDMA_WRITE alone), the
 * requester's with DOCA_ACCESS_FLAG_LOCAL_READ_WRITE. */
static struct doca_rdma *make_rdma(struct doca_dev *dev, struct doca_pe *pe, uint32_t perms)
{
	struct doca_rdma *rdma;
	uint32_t got;

	CHECK(doca_rdma_create(dev, &rdma));
	CHECK(doca_rdma_set_permissions(rdma, perms));
	CHECK(doca_rdma_get_permissions(rdma, &got));
	ASSERT(got == perms);
	CHECK(doca_rdma_task_read_set_conf(rdma, CB(read), CB(read), 4));
	CHECK(doca_rdma_task_write_set_conf(rdma, CB(write), CB(write), 4));
	CHECK(doca_rdma_task_atomic_cmp_swp_set_conf(rdma, CB(atomic_cmp_swp), CB(atomic_cmp_swp), 4));
	CHECK(doca_rdma_task_atomic_fetch_add_set_conf(rdma, CB(atomic_fetch_add), CB(atomic_fetch_add), 4));
	CHECK(doca_rdma_task_remote_net_sync_event_get_set_conf(rdma, CB(remote_net_sync_event_get),
								 CB(remote_net_sync_event_get), 4));
	CHECK(doca_rdma_task_remote_net_sync_event_notify_set_set_conf(
		rdma, CB(remote_net_sync_event_notify_set), CB(remote_net_sync_event_notify_set), 4));
	CHECK(doca_rdma_task_remote_net_sync_event_notify_add_set_conf(
		rdma, CB(remote_net_sync_event_notify_add), CB(remote_net_sync_event_notify_add), 4));
	CHECK(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(rdma)));
	CHECK(doca_ctx_start(doca_rdma_as_ctx(rdma)));
	return rdma;
}

static uint32_t responder_perms(int c)
{
	return c == 0 ? DOCA_ACCESS_FLAG_LOCAL_READ_WRITE : flags_of(c);
}

static int responder(void)
{
	struct doca_dev *dev = open_rdma_device();
	uint8_t *mem = aligned_alloc(4096, (size_t)REGIONS * REGION);
	struct doca_mmap *mmaps[REGIONS];
	struct doca_sync_event *event;
	const uint8_t *ev_desc;
	size_t ev_len;
	char file[64], peer[4096];
	int c, m;
	uint64_t expect_event = 0, v;

	ASSERT(mem != NULL);
	fill(mem, 0);
	for (m = 0; m < REGIONS; m++) {
		const void *desc;
		size_t len;

		mmaps[m] = make_mmap(dev, mem + (size_t)m * REGION, REGION,
				     DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | flags_of(m));
		if (m == 0) {
			/* Memory that grants no remote access is not exported for RDMA at all. */
			ASSERT(doca_mmap_export_rdma(mmaps[m], dev, &desc, &len) == DOCA_ERROR_NOT_PERMITTED);
			continue;
		}
		CHECK(doca_mmap_export_rdma(mmaps[m], dev, &desc, &len));
		name(file, sizeof(file), "mmap", m);
		put_file(file, desc, len);
	}
	CHECK(doca_sync_event_create(&event));
	CHECK(doca_sync_event_add_publisher_location_remote_net(event));
	CHECK(doca_sync_event_add_subscriber_location_cpu(event, dev));
	CHECK(doca_sync_event_start(event));
	CHECK(doca_sync_event_export_to_remote_net(event, &ev_desc, &ev_len));
	put_file("event", ev_desc, ev_len);

	for (c = 0; c < REGIONS; c++) {
		struct doca_pe *pe;
		struct doca_rdma *rdma;
		struct doca_rdma_connection *conn;
		const void *desc;
		size_t len;

		fill(mem, c);
		CHECK(doca_pe_create(&pe));
		rdma = make_rdma(dev, pe, responder_perms(c));
		CHECK(doca_rdma_export(rdma, &desc, &len, &conn));
		name(file, sizeof(file), "responder_conn", c);
		put_file(file, desc, len);
		name(file, sizeof(file), "requester_conn", c);
		len = get_file(file, peer, sizeof(peer));
		CHECK(doca_rdma_connect(rdma, peer, len, conn));
		/* A NIC serves the requester's operations: the responder only waits. */
		name(file, sizeof(file), "done", c);
		{
			char p[512];
			time_t start = time(NULL);

			path_of(p, sizeof(p), file);
			while (access(p, F_OK) != 0) {
				(void)doca_pe_progress(pe);
				usleep(100);
				ASSERT(time(NULL) - start < 60);
			}
		}

		check_round(mem, c);
		if (c & 2)
			expect_event = (uint64_t)c * 100 + 10;
		if (c & 4)
			expect_event += 5;
		CHECK(doca_sync_event_get(event, &v));
		ASSERT(v == expect_event);
		printf("responder: round %d (context grants%s%s%s%s): every region as both layers allow\n", c,
		       (c & 1) ? " read" : "", (c & 2) ? " write" : "", (c & 4) ? " atomic" : "",
		       c == 0 ? " nothing remote" : "");

		CHECK(doca_ctx_stop(doca_rdma_as_ctx(rdma)));
		CHECK(doca_rdma_destroy(rdma));
		CHECK(doca_pe_destroy(pe));
		name(file, sizeof(file), "checked", c);
		put_file(file, "1", 1);
	}
	get_file("requester_end", peer, sizeof(peer));
	CHECK(doca_sync_event_stop(event));
	CHECK(doca_sync_event_destroy(event));
	for (m = 0; m < REGIONS; m++) {
		CHECK(doca_mmap_stop(mmaps[m]));
		CHECK(doca_mmap_destroy(mmaps[m]));
	}
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("responder: every combination checked\n");
	return 0;
}

/* Submits a task, waits for it, and checks its status against what is allowed. */
#define RUN(kind, task, allowed, what)                                                                      \
	do {                                                                                                \
		memset(&r, 0, sizeof(r));                                                                   \
		CHECK(doca_task_submit(doca_rdma_task_##kind##_as_task(task)));                              \
		wait_for(pe, &r);                                                                           \
		if ((allowed) ? r.status != DOCA_SUCCESS : r.status != DOCA_ERROR_NOT_PERMITTED) {          \
			fprintf(stderr, "round %d region %d: %s ended with %s, expected %s\n", c, m, what,  \
				doca_error_get_name(r.status), (allowed) ? "success" : "NOT_PERMITTED");    \
			exit(1);                                                                            \
		}                                                                                           \
		refused += !(allowed);                                                                      \
		doca_task_free(doca_rdma_task_##kind##_as_task(task));                                      \
	} while (0)

static int requester(void)
{
	struct doca_dev *dev = open_rdma_device();
	uint8_t *mem = aligned_alloc(4096, 8192);
	struct doca_mmap *local, *remote[REGIONS];
	struct doca_sync_event_remote_net *event;
	struct doca_buf_inventory *inv;
	struct result r;
	union doca_data ud;
	char file[64], desc[4096];
	size_t len, i;
	int c, m, refused = 0, ran = 0;
	uint64_t v, expect_event = 0;

	ASSERT(mem != NULL);
	for (i = 0; i < WRITE_LEN; i++)
		mem[i] = pattern(i);
	local = make_mmap(dev, mem, 8192, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	for (m = 1; m < REGIONS; m++) {
		name(file, sizeof(file), "mmap", m);
		len = get_file(file, desc, sizeof(desc));
		CHECK(doca_mmap_create_from_export(NULL, desc, len, dev, &remote[m]));
	}
	len = get_file("event", desc, sizeof(desc));
	CHECK(doca_sync_event_remote_net_create_from_export(dev, (const uint8_t *)desc, len, &event));
	CHECK(doca_buf_inventory_create(16, &inv));
	CHECK(doca_buf_inventory_start(inv));
	ud.ptr = &r;

	for (c = 0; c < REGIONS; c++) {
		struct doca_pe *pe;
		struct doca_rdma *rdma;
		struct doca_rdma_connection *conn;
		const void *mine;
		size_t mine_len;
		int read_ctx = c & 1, write_ctx = c & 2, atomic_ctx = c & 4;

		CHECK(doca_pe_create(&pe));
		rdma = make_rdma(dev, pe, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
		CHECK(doca_rdma_export(rdma, &mine, &mine_len, &conn));
		name(file, sizeof(file), "requester_conn", c);
		put_file(file, mine, mine_len);
		name(file, sizeof(file), "responder_conn", c);
		len = get_file(file, desc, sizeof(desc));
		CHECK(doca_rdma_connect(rdma, desc, len, conn));

		for (m = 1; m < REGIONS; m++) {
			struct doca_buf *src, *dst, *rsrc, *rdst, *target, *res;
			struct doca_rdma_task_write *w;
			struct doca_rdma_task_read *rd;
			struct doca_rdma_task_atomic_fetch_add *fa;
			struct doca_rdma_task_atomic_cmp_swp *cs;
			void *rbase;
			size_t rlen;
			int read_ok = read_ctx && (m & 1), write_ok = write_ctx && (m & 2),
			    atomic_ok = atomic_ctx && (m & 4);

			CHECK(doca_mmap_get_memrange(remote[m], &rbase, &rlen));
			ASSERT(rlen == REGION);

			/* Write 64 bytes at the region's start. */
			CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mem, WRITE_LEN, &src));
			CHECK(doca_buf_inventory_buf_get_by_addr(inv, remote[m], rbase, WRITE_LEN,
								 &rdst));
			CHECK(doca_rdma_task_write_allocate_init(rdma, conn, src, rdst, ud, &w));
			RUN(write, w, write_ok, "write");

			/* Read 64 bytes: where refused, the destination stays as it was. */
			memset(mem + 4096, 0xee, WRITE_LEN);
			CHECK(doca_buf_inventory_buf_get_by_data(inv, remote[m], (uint8_t *)rbase + READ_AT, WRITE_LEN,
								 &rsrc));
			CHECK(doca_buf_inventory_buf_get_by_addr(inv, local, mem + 4096, WRITE_LEN, &dst));
			CHECK(doca_rdma_task_read_allocate_init(rdma, conn, rsrc, dst, ud, &rd));
			RUN(read, rd, read_ok, "read");
			for (i = 0; i < WRITE_LEN; i++)
				ASSERT(mem[4096 + i] == (read_ok ? read_byte(c, m, i) : 0xee));

			/* Fetch-and-add 1, then compare-and-swap to SWAPPED. */
			CHECK(doca_buf_inventory_buf_get_by_data(inv, remote[m], (uint8_t *)rbase + ATOMIC_AT, 8,
								 &target));
			CHECK(doca_buf_inventory_buf_get_by_addr(inv, local, mem + 6144, 8, &res));
			v = 0;
			memcpy(mem + 6144, &v, 8);
			CHECK(doca_rdma_task_atomic_fetch_add_allocate_init(rdma, conn, target, res, 1, ud, &fa));
			RUN(atomic_fetch_add, fa, atomic_ok, "fetch-and-add");
			memcpy(&v, mem + 6144, 8);
			ASSERT(v == (atomic_ok ? word_start(c, m) : 0));
			CHECK(doca_buf_reset_data_len(res));
			CHECK(doca_rdma_task_atomic_cmp_swp_allocate_init(rdma, conn, target, res, word_start(c, m) + 1,
									  SWAPPED, ud, &cs));
			RUN(atomic_cmp_swp, cs, atomic_ok, "compare-and-swap");

			CHECK(doca_buf_dec_refcount(src, NULL));
			CHECK(doca_buf_dec_refcount(rdst, NULL));
			CHECK(doca_buf_dec_refcount(rsrc, NULL));
			CHECK(doca_buf_dec_refcount(dst, NULL));
			CHECK(doca_buf_dec_refcount(target, NULL));
			CHECK(doca_buf_dec_refcount(res, NULL));
			ran += 4;
		}

		/* The responder's sync event: set (a write), add (an atomic), get (a read). */
		m = -1;
		{
			struct doca_rdma_task_remote_net_sync_event_notify_set *s;
			struct doca_rdma_task_remote_net_sync_event_notify_add *a;
			struct doca_rdma_task_remote_net_sync_event_get *g;
			struct doca_buf *val, *out;

			v = (uint64_t)c * 100 + 10;
			memcpy(mem + 7000, &v, 8);
			CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mem + 7000, 8, &val));
			CHECK(doca_rdma_task_remote_net_sync_event_notify_set_allocate_init(rdma, conn, event, val, ud,
											    &s));
			RUN(remote_net_sync_event_notify_set, s, write_ctx, "sync event set");
			if (write_ctx)
				expect_event = v;
			CHECK(doca_buf_inventory_buf_get_by_addr(inv, local, mem + 7100, 8, &out));
			v = 0;
			memcpy(mem + 7100, &v, 8);
			CHECK(doca_rdma_task_remote_net_sync_event_notify_add_allocate_init(rdma, conn, event, out, 5,
											    ud, &a));
			RUN(remote_net_sync_event_notify_add, a, atomic_ctx, "sync event add");
			memcpy(&v, mem + 7100, 8);
			ASSERT(v == (atomic_ctx ? expect_event : 0));
			if (atomic_ctx)
				expect_event += 5;
			CHECK(doca_buf_reset_data_len(out));
			memset(mem + 7100, 0xee, 8);
			CHECK(doca_rdma_task_remote_net_sync_event_get_allocate_init(rdma, conn, event, out, ud, &g));
			RUN(remote_net_sync_event_get, g, read_ctx, "sync event get");
			memcpy(&v, mem + 7100, 8);
			if (read_ctx)
				ASSERT(v == expect_event);
			else
				ASSERT(v == 0xeeeeeeeeeeeeeeeeULL);
			CHECK(doca_buf_dec_refcount(val, NULL));
			CHECK(doca_buf_dec_refcount(out, NULL));
			ran += 3;
		}

		name(file, sizeof(file), "done", c);
		put_file(file, "1", 1);
		name(file, sizeof(file), "checked", c);
		(void)get_file(file, desc, sizeof(desc));
		CHECK(doca_ctx_stop(doca_rdma_as_ctx(rdma)));
		CHECK(doca_rdma_destroy(rdma));
		CHECK(doca_pe_destroy(pe));
	}
	put_file("requester_end", "1", 1);
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_sync_event_remote_net_destroy(event));
	for (m = 1; m < REGIONS; m++)
		CHECK(doca_mmap_destroy(remote[m]));
	CHECK(doca_mmap_stop(local));
	CHECK(doca_mmap_destroy(local));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("requester: %d operations, %d refused with DOCA_ERROR_NOT_PERMITTED as both layers say\n", ran, refused);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s responder|requester DIR\n", argv[0]);
		return 2;
	}
	dir = argv[2];
	if (strcmp(argv[1], "responder") == 0)
		return responder();
	return requester();
}
