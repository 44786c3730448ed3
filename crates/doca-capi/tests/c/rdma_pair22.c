/*
 * Two processes of DOCA 2.2 RDMA, written as DOCA 2.2's samples write them: one
 * connection per context, descriptors through files in a directory both sides see, jobs
 * on a work queue whose events carry a struct doca_rdma_result.
 *
 *   rdma_pair22 server DIR   exports memory (read-write-atomic and read-only), posts two
 *                            receives (one into a buffer whose data spans it, as the
 *                            samples do), checks what the client did, then stops its
 *                            memory (revocation)
 *   rdma_pair22 client DIR   every job type against it, and the refusals: a permission
 *                            the export does not grant, a damaged descriptor, a job
 *                            before the connection, memory after its revocation
 */
#include <stdint.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_mmap.h>
#include <doca_rdma.h>

#include "common.h"
#include "pair_files.h"
#include "rdma_common22.h"

#define MEM_LEN (16 * 1024)

struct side {
	struct doca_dev *dev;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

static void make_side(struct side *s)
{
	uint32_t perms = DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE |
			 DOCA_ACCESS_RDMA_ATOMIC;
	uint32_t got;

	s->dev = open_rdma_device();
	CHECK(doca_rdma_create(&s->rdma));
	s->ctx = doca_rdma_as_ctx(s->rdma);
	ASSERT(s->ctx != NULL);
	/* Permissions need the device first. */
	EXPECT_ERR(doca_rdma_set_permissions(s->rdma, perms), DOCA_ERROR_BAD_STATE);
	CHECK(doca_ctx_dev_add(s->ctx, s->dev));
	CHECK(doca_rdma_set_permissions(s->rdma, perms));
	CHECK(doca_rdma_get_permissions(s->rdma, &got));
	ASSERT(got == perms);
	EXPECT_ERR(doca_rdma_set_transport_type(s->rdma, DOCA_RDMA_TRANSPORT_DC), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_ctx_start(s->ctx));
	CHECK(doca_workq_create(8, &s->wq));
	CHECK(doca_ctx_workq_add(s->ctx, s->wq));
}

static void end_side(struct side *s)
{
	CHECK(doca_ctx_workq_rm(s->ctx, s->wq));
	CHECK(doca_workq_destroy(s->wq));
	CHECK(doca_ctx_stop(s->ctx));
	CHECK(doca_ctx_dev_rm(s->ctx, s->dev));
	CHECK(doca_rdma_destroy(s->rdma));
}

/* Submits a job and waits for its event; returns the job's status from its result. */
static doca_error_t run_job(struct side *s, struct doca_job *job, struct doca_rdma_result *res)
{
	struct doca_event ev;
	doca_error_t r;
	time_t start = time(NULL);

	memset(res, 0xff, sizeof(*res));
	job->ctx = s->ctx;
	job->flags = DOCA_JOB_FLAGS_NONE;
	job->user_data.u64 = 0x5eed;
	CHECK(doca_workq_submit(s->wq, job));
	ev.result.ptr = res;
	while ((r = doca_workq_progress_retrieve(s->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN) {
		usleep(10);
		ASSERT(time(NULL) - start < 30);
	}
	ASSERT(ev.user_data.u64 == 0x5eed);
	ASSERT(ev.type == job->type);
	ASSERT(ev.result.ptr == res);
	if (r == DOCA_SUCCESS)
		ASSERT(res->result == DOCA_SUCCESS);
	else
		ASSERT(r == DOCA_ERROR_IO_FAILED && res->result != DOCA_SUCCESS);
	return res->result;
}

static int server(void)
{
	struct side s;
	struct doca_mmap *mem_mmap, *ro_mmap, *recv_mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *rbuf;
	struct doca_rdma_job_recv recv;
	struct doca_rdma_result res;
	uint8_t *mem = calloc(1, MEM_LEN), *ro = calloc(1, 4096), *rmem = calloc(1, 4096);
	const void *desc;
	size_t desc_len, i, len;
	char peer[4096];
	size_t peer_len;
	void *data;
	uint64_t v;
	enum doca_rdma_state st;

	ASSERT(mem && ro && rmem);
	for (i = 0; i < 4096; i++)
		ro[i] = (uint8_t)i;
	make_side(&s);
	mem_mmap = make_mmap(s.dev, mem, MEM_LEN,
			     DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE |
				     DOCA_ACCESS_RDMA_ATOMIC);
	ro_mmap = make_mmap(s.dev, ro, 4096, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ);
	recv_mmap = make_mmap(s.dev, rmem, 4096, DOCA_ACCESS_LOCAL_READ_WRITE);
	CHECK(doca_mmap_export_rdma(mem_mmap, s.dev, &desc, &desc_len));
	put_file("mmap", desc, desc_len);
	CHECK(doca_mmap_export_rdma(ro_mmap, s.dev, &desc, &desc_len));
	put_file("mmap_ro", desc, desc_len);

	CHECK(doca_rdma_get_state(s.rdma, &st));
	ASSERT(st == DOCA_RDMA_STATE_INIT);
	CHECK(doca_rdma_export(s.rdma, &desc, &desc_len));
	put_file("server_conn", desc, desc_len);
	peer_len = get_file("client_conn", peer, sizeof(peer));
	CHECK(doca_rdma_connect(s.rdma, peer, peer_len));
	CHECK(doca_rdma_get_state(s.rdma, &st));
	ASSERT(st == DOCA_RDMA_STATE_CONNECTED);

	/* A send with immediate lands over the data of a buffer that spans 256 bytes (as
	 * the samples make their receive buffers), then a write's immediate (no buffer). */
	CHECK(doca_buf_inventory_create(NULL, 8, 0, &inv));
	CHECK(doca_buf_inventory_start(inv));
	memset(rmem, 'x', 256);
	CHECK(doca_buf_inventory_buf_by_data(inv, recv_mmap, rmem, 256, &rbuf));
	recv.base.type = DOCA_RDMA_JOB_RECV;
	recv.dst_buff = rbuf;
	CHECK(run_job(&s, &recv.base, &res));
	ASSERT(res.opcode == DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM);
	ASSERT(res.immediate_data == 0x1234);
	ASSERT(res.length == 6);
	CHECK(doca_buf_get_data(rbuf, &data));
	CHECK(doca_buf_get_data_len(rbuf, &len));
	ASSERT(data == rmem && len == 6 && strcmp((char *)rmem, "hello") == 0);
	recv.dst_buff = NULL;
	CHECK(run_job(&s, &recv.base, &res));
	ASSERT(res.opcode == DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM);
	ASSERT(res.immediate_data == 7);
	ASSERT(res.length == 16); /* the write's length, as a verbs completion gives it */

	/* What the client wrote and updated atomically (the write with immediate came
	 * last, so everything before it landed). */
	for (i = 0; i < 4096; i++)
		if (i < 1024 || i >= 1032)
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

	CHECK(doca_buf_refcount_rm(rbuf, NULL));
	end_side(&s);
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mem_mmap));
	CHECK(doca_mmap_stop(ro_mmap));
	CHECK(doca_mmap_destroy(ro_mmap));
	CHECK(doca_mmap_stop(recv_mmap));
	CHECK(doca_mmap_destroy(recv_mmap));
	CHECK(doca_dev_close(s.dev));
	free(mem);
	free(ro);
	free(rmem);
	printf("server: done\n");
	return 0;
}

static int client(void)
{
	struct side s;
	struct doca_mmap *local, *remote, *remote_ro, *bad;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst, *rsrc, *rdst;
	struct doca_rdma_job_read_write rw;
	struct doca_rdma_job_send send;
	struct doca_rdma_job_atomic at;
	struct doca_rdma_result res;
	struct doca_event ev;
	uint8_t *mem = calloc(1, MEM_LEN);
	char desc_buf[4096], mmap_desc[4096], ro_desc[4096];
	size_t desc_len, mmap_len, ro_len, i;
	const void *mine, *again;
	size_t mine_len, again_len;
	void *rbase;
	size_t rlen;
	uint64_t v, before;
	uint32_t n;

	ASSERT(mem != NULL);
	make_side(&s);
	CHECK(doca_rdma_get_max_buf_chain_len(doca_dev_as_devinfo(s.dev), DOCA_RDMA_JOB_SEND, DOCA_RDMA_TRANSPORT_RC,
					      &n));
	ASSERT(n >= 1);
	CHECK(doca_rdma_export(s.rdma, &mine, &mine_len));
	CHECK(doca_rdma_export(s.rdma, &again, &again_len));
	ASSERT(again == mine && again_len == mine_len);
	put_file("client_conn", mine, mine_len);
	desc_len = get_file("server_conn", desc_buf, sizeof(desc_buf));
	mmap_len = get_file("mmap", mmap_desc, sizeof(mmap_desc));
	ro_len = get_file("mmap_ro", ro_desc, sizeof(ro_desc));

	local = make_mmap(s.dev, mem, MEM_LEN, DOCA_ACCESS_LOCAL_READ_WRITE);
	CHECK(doca_buf_inventory_create(NULL, 16, 0, &inv));
	CHECK(doca_buf_inventory_start(inv));
	strcpy((char *)mem + 4096, "hello");
	CHECK(doca_buf_inventory_buf_by_data(inv, local, mem + 4096, 6, &src));

	/* A job before the connection is refused when submitted. */
	send.base.type = DOCA_RDMA_JOB_SEND_IMM;
	send.base.ctx = s.ctx;
	send.base.flags = DOCA_JOB_FLAGS_NONE;
	send.src_buff = src;
	send.immediate_data = 0x1234;
	send.rdma_peer_addr = NULL;
	EXPECT_ERR(doca_workq_submit(s.wq, &send.base), DOCA_ERROR_NOT_CONNECTED);

	/* A damaged descriptor is refused, and the connection stays free for the good one. */
	desc_buf[desc_len / 2] ^= 0x40;
	EXPECT_ERR(doca_rdma_connect(s.rdma, desc_buf, desc_len), DOCA_ERROR_CONNECTION_ABORTED);
	desc_buf[desc_len / 2] ^= 0x40;
	CHECK(doca_rdma_connect(s.rdma, desc_buf, desc_len));
	EXPECT_ERR(doca_rdma_connect(s.rdma, desc_buf, desc_len), DOCA_ERROR_BAD_STATE);

	CHECK(doca_mmap_create_from_export(NULL, mmap_desc, mmap_len, s.dev, &remote));
	CHECK(doca_mmap_create_from_export(NULL, ro_desc, ro_len, s.dev, &remote_ro));
	mmap_desc[20] ^= 1;
	EXPECT_ERR(doca_mmap_create_from_export(NULL, mmap_desc, mmap_len, s.dev, &bad), DOCA_ERROR_INVALID_VALUE);
	mmap_desc[20] ^= 1;
	CHECK(doca_mmap_get_memrange(remote, &rbase, &rlen));
	ASSERT(rlen == MEM_LEN);

	/* Write 4 KiB, then read it back elsewhere. */
	for (i = 0; i < 4096; i++)
		mem[i] = pattern(i);
	CHECK(doca_buf_inventory_buf_by_data(inv, local, mem, 4096, &rsrc));
	CHECK(doca_buf_inventory_buf_by_addr(inv, remote, rbase, 4096, &rdst));
	memset(&rw, 0, sizeof(rw));
	rw.base.type = DOCA_RDMA_JOB_WRITE;
	rw.src_buff = rsrc;
	rw.dst_buff = rdst;
	CHECK(run_job(&s, &rw.base, &res));
	ASSERT(res.length == 0);
	CHECK(doca_buf_refcount_rm(rsrc, NULL));
	CHECK(doca_buf_inventory_buf_by_data(inv, remote, rbase, 4096, &rsrc));
	CHECK(doca_buf_inventory_buf_by_addr(inv, local, mem + 8192, 4096, &dst));
	rw.base.type = DOCA_RDMA_JOB_READ;
	rw.src_buff = rsrc;
	rw.dst_buff = dst;
	CHECK(run_job(&s, &rw.base, &res));
	ASSERT(res.length == 4096);
	ASSERT(memcmp(mem, mem + 8192, 4096) == 0);

	/* Atomics on the 8 bytes at 1024: fetch-and-add, then compare-and-swap. */
	{
		struct doca_buf *target, *out;

		memcpy(&before, mem + 1024, 8);
		CHECK(doca_buf_inventory_buf_by_data(inv, remote, (uint8_t *)rbase + 1024, 8, &target));
		CHECK(doca_buf_inventory_buf_by_addr(inv, local, mem + 12288, 8, &out));
		memset(&at, 0, sizeof(at));
		at.base.type = DOCA_RDMA_JOB_ATOMIC_FETCH_ADD;
		at.cmp_or_add_dest_buff = target;
		at.result_buff = out;
		at.swap_or_add_data = 5;
		CHECK(run_job(&s, &at.base, &res));
		memcpy(&v, mem + 12288, 8);
		ASSERT(v == before);
		CHECK(doca_buf_reset_data_len(out));
		at.base.type = DOCA_RDMA_JOB_ATOMIC_CMP_SWP;
		at.cmp_data = before + 5;
		at.swap_or_add_data = 99;
		CHECK(run_job(&s, &at.base, &res));
		memcpy(&v, mem + 12288, 8);
		ASSERT(v == before + 5);
		CHECK(doca_buf_refcount_rm(target, NULL));
		CHECK(doca_buf_refcount_rm(out, NULL));
	}

	/* A send with immediate data, then a write with immediate data. */
	CHECK(run_job(&s, &send.base, &res));
	{
		struct doca_buf *wsrc, *wdst;

		for (i = 0; i < 16; i++)
			mem[4200 + i] = (uint8_t)(0xa0 + i);
		CHECK(doca_buf_inventory_buf_by_data(inv, local, mem + 4200, 16, &wsrc));
		CHECK(doca_buf_inventory_buf_by_addr(inv, remote, (uint8_t *)rbase + 2048 + 4096, 16, &wdst));
		memset(&rw, 0, sizeof(rw));
		rw.base.type = DOCA_RDMA_JOB_WRITE_IMM;
		rw.src_buff = wsrc;
		rw.dst_buff = wdst;
		rw.immediate_data = 7;
		CHECK(run_job(&s, &rw.base, &res));
		CHECK(doca_buf_refcount_rm(wdst, NULL));

		/* A write into memory exported read-only fails, and the event says so. */
		{
			struct doca_buf *rodst;
			void *robase;
			size_t rolen;

			CHECK(doca_mmap_get_memrange(remote_ro, &robase, &rolen));
			CHECK(doca_buf_inventory_buf_by_addr(inv, remote_ro, robase, 16, &rodst));
			rw.base.type = DOCA_RDMA_JOB_WRITE;
			rw.dst_buff = rodst;
			ASSERT(run_job(&s, &rw.base, &res) == DOCA_ERROR_NOT_PERMITTED);
			/* With no result pointer, result.u64 carries the status. */
			rw.base.ctx = s.ctx;
			CHECK(doca_workq_submit(s.wq, &rw.base));
			ev.result.u64 = 0;
			EXPECT_ERR(wait_event(s.wq, &ev), DOCA_ERROR_IO_FAILED);
			ASSERT(ev.result.u64 == DOCA_ERROR_NOT_PERMITTED);
			CHECK(doca_buf_refcount_rm(rodst, NULL));
		}
		CHECK(doca_buf_refcount_rm(wsrc, NULL));
	}

	/* Once the server stopped its memory, reads of it are refused. */
	get_file("revoked", desc_buf, sizeof(desc_buf));
	CHECK(doca_buf_reset_data_len(dst));
	memset(&rw, 0, sizeof(rw));
	rw.base.type = DOCA_RDMA_JOB_READ;
	rw.src_buff = rsrc;
	rw.dst_buff = dst;
	ASSERT(run_job(&s, &rw.base, &res) == DOCA_ERROR_NOT_FOUND);
	printf("client: every job type ran, and the refusals came\n");
	put_file("client_done", "1", 1);

	CHECK(doca_buf_refcount_rm(src, NULL));
	CHECK(doca_buf_refcount_rm(dst, NULL));
	CHECK(doca_buf_refcount_rm(rsrc, NULL));
	CHECK(doca_buf_refcount_rm(rdst, NULL));
	end_side(&s);
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(remote));
	CHECK(doca_mmap_destroy(remote_ro));
	CHECK(doca_mmap_stop(local));
	CHECK(doca_mmap_destroy(local));
	CHECK(doca_dev_close(s.dev));
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
