/*
 * Both layers of RDMA access control in DOCA 2.2, as its samples write it: a remote
 * read, write or atomic job lands only where the responder's exported memory
 * (doca_mmap_set_permissions) AND its RDMA context (doca_rdma_set_permissions) allow
 * it; otherwise the job's result is DOCA_ERROR_NOT_PERMITTED, nothing is touched, and
 * both sides go on working.
 *
 *   rdma_perms22 responder DIR   eight rounds, one context per combination of RDMA
 *                                read, write and atomic; memory exported with every
 *                                combination; after each round, checks every byte
 *   rdma_perms22 requester DIR   every job type on every memory in every round
 */
#include <stdint.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_mmap.h>
#include <doca_rdma.h>

#include "common.h"
#include "pair_files.h"
#include "perm_matrix.h"
#include "rdma_common22.h"

static uint32_t flags_of(int k)
{
	return ((k & 1) ? DOCA_ACCESS_RDMA_READ : 0) | ((k & 2) ? DOCA_ACCESS_RDMA_WRITE : 0) |
	       ((k & 4) ? DOCA_ACCESS_RDMA_ATOMIC : 0);
}

struct side {
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

static void make_side(struct side *s, struct doca_dev *dev, uint32_t perms)
{
	uint32_t got;

	CHECK(doca_rdma_create(&s->rdma));
	s->ctx = doca_rdma_as_ctx(s->rdma);
	CHECK(doca_ctx_dev_add(s->ctx, dev));
	CHECK(doca_rdma_set_permissions(s->rdma, perms));
	CHECK(doca_rdma_get_permissions(s->rdma, &got));
	ASSERT(got == perms);
	CHECK(doca_ctx_start(s->ctx));
	CHECK(doca_workq_create(8, &s->wq));
	CHECK(doca_ctx_workq_add(s->ctx, s->wq));
}

static void end_side(struct side *s, struct doca_dev *dev)
{
	CHECK(doca_ctx_workq_rm(s->ctx, s->wq));
	CHECK(doca_workq_destroy(s->wq));
	CHECK(doca_ctx_stop(s->ctx));
	CHECK(doca_ctx_dev_rm(s->ctx, dev));
	CHECK(doca_rdma_destroy(s->rdma));
}

/* Submits a job and waits for its event; the job's status from its result. */
static doca_error_t run_job(struct side *s, struct doca_job *job)
{
	struct doca_rdma_result res;
	struct doca_event ev;
	doca_error_t r;
	time_t start = time(NULL);

	job->ctx = s->ctx;
	job->flags = DOCA_JOB_FLAGS_NONE;
	CHECK(doca_workq_submit(s->wq, job));
	ev.result.ptr = &res;
	while ((r = doca_workq_progress_retrieve(s->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN) {
		usleep(10);
		ASSERT(time(NULL) - start < 30);
	}
	if (r == DOCA_SUCCESS)
		ASSERT(res.result == DOCA_SUCCESS);
	else
		ASSERT(r == DOCA_ERROR_IO_FAILED && res.result != DOCA_SUCCESS);
	return res.result;
}

static int responder(void)
{
	struct doca_dev *dev = open_rdma_device();
	uint8_t *mem = aligned_alloc(4096, (size_t)REGIONS * REGION);
	struct doca_mmap *mmaps[REGIONS];
	char file[64], peer[4096];
	size_t len;
	int c, m;

	ASSERT(mem != NULL);
	fill(mem, 0);
	for (m = 0; m < REGIONS; m++) {
		const void *desc;

		mmaps[m] = make_mmap(dev, mem + (size_t)m * REGION, REGION, DOCA_ACCESS_LOCAL_READ_WRITE | flags_of(m));
		if (m == 0) {
			/* Memory that grants no remote access is not exported for RDMA at all. */
			EXPECT_ERR(doca_mmap_export_rdma(mmaps[m], dev, &desc, &len), DOCA_ERROR_NOT_PERMITTED);
			continue;
		}
		CHECK(doca_mmap_export_rdma(mmaps[m], dev, &desc, &len));
		name(file, sizeof(file), "mmap", m);
		put_file(file, desc, len);
	}
	for (c = 0; c < REGIONS; c++) {
		struct side s;
		const void *desc;

		fill(mem, c);
		make_side(&s, dev, c == 0 ? DOCA_ACCESS_LOCAL_READ_WRITE : flags_of(c));
		CHECK(doca_rdma_export(s.rdma, &desc, &len));
		name(file, sizeof(file), "responder_conn", c);
		put_file(file, desc, len);
		name(file, sizeof(file), "requester_conn", c);
		len = get_file(file, peer, sizeof(peer));
		CHECK(doca_rdma_connect(s.rdma, peer, len));
		name(file, sizeof(file), "done", c);
		(void)get_file(file, peer, sizeof(peer));
		check_round(mem, c);
		printf("responder: round %d: every region as both layers allow\n", c);
		end_side(&s, dev);
		name(file, sizeof(file), "checked", c);
		put_file(file, "1", 1);
	}
	get_file("requester_end", peer, sizeof(peer));
	for (m = 0; m < REGIONS; m++) {
		CHECK(doca_mmap_stop(mmaps[m]));
		CHECK(doca_mmap_destroy(mmaps[m]));
	}
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("responder: every combination checked\n");
	return 0;
}

/* Runs a job and checks its status against what is allowed. */
static void expect(struct side *s, struct doca_job *job, int allowed, int c, int m, const char *what, int *refused)
{
	doca_error_t r = run_job(s, job);

	if (allowed ? r != DOCA_SUCCESS : r != DOCA_ERROR_NOT_PERMITTED) {
		fprintf(stderr, "round %d region %d: %s ended with %s, expected %s\n", c, m, what, doca_get_error_name(r),
			allowed ? "success" : "NOT_PERMITTED");
		exit(1);
	}
	*refused += !allowed;
}

static int requester(void)
{
	struct doca_dev *dev = open_rdma_device();
	uint8_t *mem = aligned_alloc(4096, 8192);
	struct doca_mmap *local, *remote[REGIONS];
	struct doca_buf_inventory *inv;
	char file[64], desc[4096];
	size_t len, i;
	int c, m, refused = 0, ran = 0;
	uint64_t v;

	ASSERT(mem != NULL);
	for (i = 0; i < WRITE_LEN; i++)
		mem[i] = pattern(i);
	local = make_mmap(dev, mem, 8192, DOCA_ACCESS_LOCAL_READ_WRITE);
	for (m = 1; m < REGIONS; m++) {
		name(file, sizeof(file), "mmap", m);
		len = get_file(file, desc, sizeof(desc));
		CHECK(doca_mmap_create_from_export(NULL, desc, len, dev, &remote[m]));
	}
	CHECK(doca_buf_inventory_create(NULL, 16, 0, &inv));
	CHECK(doca_buf_inventory_start(inv));

	for (c = 0; c < REGIONS; c++) {
		struct side s;
		const void *mine;
		size_t mine_len;

		make_side(&s, dev, DOCA_ACCESS_LOCAL_READ_WRITE);
		CHECK(doca_rdma_export(s.rdma, &mine, &mine_len));
		name(file, sizeof(file), "requester_conn", c);
		put_file(file, mine, mine_len);
		name(file, sizeof(file), "responder_conn", c);
		len = get_file(file, desc, sizeof(desc));
		CHECK(doca_rdma_connect(s.rdma, desc, len));

		for (m = 1; m < REGIONS; m++) {
			struct doca_rdma_job_read_write rw;
			struct doca_rdma_job_atomic at;
			struct doca_buf *src, *dst, *rsrc, *rdst, *target, *res;
			void *rbase;
			size_t rlen;
			int read_ok = (c & 1) && (m & 1), write_ok = (c & 2) && (m & 2), atomic_ok = (c & 4) && (m & 4);

			CHECK(doca_mmap_get_memrange(remote[m], &rbase, &rlen));
			CHECK(doca_buf_inventory_buf_by_data(inv, local, mem, WRITE_LEN, &src));
			CHECK(doca_buf_inventory_buf_by_addr(inv, remote[m], rbase, WRITE_LEN, &rdst));
			memset(&rw, 0, sizeof(rw));
			rw.base.type = DOCA_RDMA_JOB_WRITE;
			rw.src_buff = src;
			rw.dst_buff = rdst;
			expect(&s, &rw.base, write_ok, c, m, "write", &refused);

			memset(mem + 4096, 0xee, WRITE_LEN);
			CHECK(doca_buf_inventory_buf_by_data(inv, remote[m], (uint8_t *)rbase + READ_AT, WRITE_LEN, &rsrc));
			CHECK(doca_buf_inventory_buf_by_addr(inv, local, mem + 4096, WRITE_LEN, &dst));
			memset(&rw, 0, sizeof(rw));
			rw.base.type = DOCA_RDMA_JOB_READ;
			rw.src_buff = rsrc;
			rw.dst_buff = dst;
			expect(&s, &rw.base, read_ok, c, m, "read", &refused);
			for (i = 0; i < WRITE_LEN; i++)
				ASSERT(mem[4096 + i] == (read_ok ? read_byte(c, m, i) : 0xee));

			CHECK(doca_buf_inventory_buf_by_data(inv, remote[m], (uint8_t *)rbase + ATOMIC_AT, 8, &target));
			CHECK(doca_buf_inventory_buf_by_addr(inv, local, mem + 6144, 8, &res));
			v = 0;
			memcpy(mem + 6144, &v, 8);
			memset(&at, 0, sizeof(at));
			at.base.type = DOCA_RDMA_JOB_ATOMIC_FETCH_ADD;
			at.cmp_or_add_dest_buff = target;
			at.result_buff = res;
			at.swap_or_add_data = 1;
			expect(&s, &at.base, atomic_ok, c, m, "fetch-and-add", &refused);
			memcpy(&v, mem + 6144, 8);
			ASSERT(v == (atomic_ok ? word_start(c, m) : 0));
			CHECK(doca_buf_reset_data_len(res));
			at.base.type = DOCA_RDMA_JOB_ATOMIC_CMP_SWP;
			at.cmp_data = word_start(c, m) + 1;
			at.swap_or_add_data = SWAPPED;
			expect(&s, &at.base, atomic_ok, c, m, "compare-and-swap", &refused);

			CHECK(doca_buf_refcount_rm(src, NULL));
			CHECK(doca_buf_refcount_rm(rdst, NULL));
			CHECK(doca_buf_refcount_rm(rsrc, NULL));
			CHECK(doca_buf_refcount_rm(dst, NULL));
			CHECK(doca_buf_refcount_rm(target, NULL));
			CHECK(doca_buf_refcount_rm(res, NULL));
			ran += 4;
		}
		name(file, sizeof(file), "done", c);
		put_file(file, "1", 1);
		name(file, sizeof(file), "checked", c);
		(void)get_file(file, desc, sizeof(desc));
		end_side(&s, dev);
	}
	put_file("requester_end", "1", 1);
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	for (m = 1; m < REGIONS; m++)
		CHECK(doca_mmap_destroy(remote[m]));
	CHECK(doca_mmap_stop(local));
	CHECK(doca_mmap_destroy(local));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("requester: %d jobs, %d refused with DOCA_ERROR_NOT_PERMITTED as both layers say\n", ran, refused);
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
