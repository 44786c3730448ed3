/*
 * Buffers as DOCA programs in the wild use them: 128 erasure coding recover tasks
 * that share one source and one destination, submitted back to back, then progressed
 * (the destination's data length changes at delivery, so every submit sees the same
 * room); SHA and DMA tasks sharing a destination likewise; an empty buffer taken with
 * doca_buf_inventory_buf_get_by_data(..., 0) and pointed elsewhere in the mmap with
 * doca_buf_set_data, as a source and as a destination; and a data section outside the
 * mmap, refused at submit; one DMA task allocated once and resubmitted from its
 * completion with its buffers moved by doca_buf_inventory_buf_reuse_by_data/_by_addr,
 * as NVIDIA's storage application does.
 */
#include <doca_erasure_coding.h>
#include <doca_sha.h>

#include "common3.h"

#define K 4
#define M 2
#define BLOCK 4096
#define N 128

struct seen {
	int done;
	int failed;
	doca_error_t last_err;
	size_t len_at_first_delivery;
	struct doca_buf *dst;
};

static void rec_ok(struct doca_ec_task_recover *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)t;
	(void)td;
	if (s->done++ == 0)
		CHECK(doca_buf_get_data_len(s->dst, &s->len_at_first_delivery));
}

static void rec_err(struct doca_ec_task_recover *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)td;
	s->failed++;
	s->last_err = doca_task_get_status(doca_ec_task_recover_as_task(t));
}

static void create_ok(struct doca_ec_task_create *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)t;
	(void)td;
	s->done++;
}

static void create_err(struct doca_ec_task_create *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)td;
	s->failed++;
	s->last_err = doca_task_get_status(doca_ec_task_create_as_task(t));
}

static void sha_ok(struct doca_sha_task_hash *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)t;
	(void)td;
	s->done++;
}

static void sha_err(struct doca_sha_task_hash *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)td;
	s->failed++;
	s->last_err = doca_task_get_status(doca_sha_task_hash_as_task(t));
}

static void dma_ok(struct doca_dma_task_memcpy *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)t;
	(void)td;
	s->done++;
}

static void dma_err(struct doca_dma_task_memcpy *t, union doca_data td, union doca_data cd)
{
	struct seen *s = (struct seen *)cd.ptr;
	(void)td;
	s->failed++;
	s->last_err = doca_task_get_status(doca_dma_task_memcpy_as_task(t));
}

static void drain(struct doca_pe *pe, struct seen *s, int want)
{
	while (s->done + s->failed < want)
		(void)doca_pe_progress(pe);
}

static void shared_destination_ec(struct doca_dev *dev, struct doca_pe *pe, struct mem *m)
{
	struct doca_ec *ec;
	struct doca_ec_matrix *coding, *rec;
	struct doca_buf *data, *rdnc, *src, *dst;
	struct doca_ec_task_create *create;
	static struct doca_ec_task_recover *t[N];
	struct seen s;
	union doca_data ud, tud;
	uint32_t missing[] = {0};
	uint8_t *d = m->bytes, *r = d + K * BLOCK, *a = r + M * BLOCK, *o = a + K * BLOCK;
	size_t len;
	int i;

	memset(&s, 0, sizeof(s));
	ud.ptr = &s;
	tud.u64 = 0;
	CHECK(doca_ec_create(dev, &ec));
	CHECK(doca_pe_connect_ctx(pe, doca_ec_as_ctx(ec)));
	CHECK(doca_ctx_set_user_data(doca_ec_as_ctx(ec), ud));
	CHECK(doca_ec_task_create_set_conf(ec, create_ok, create_err, 1));
	CHECK(doca_ec_task_recover_set_conf(ec, rec_ok, rec_err, N));
	CHECK(doca_ctx_start(doca_ec_as_ctx(ec)));
	CHECK(doca_ec_matrix_create(ec, DOCA_EC_MATRIX_TYPE_CAUCHY, K, M, &coding));
	for (i = 0; i < K * BLOCK; i++)
		d[i] = (uint8_t)(i * 13 + 5);
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, d, K * BLOCK, &data));
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, r, M * BLOCK, &rdnc));
	s.dst = rdnc;
	CHECK(doca_ec_task_create_allocate_init(ec, coding, data, rdnc, tud, &create));
	CHECK(doca_task_submit(doca_ec_task_create_as_task(create)));
	drain(pe, &s, 1);
	ASSERT(s.failed == 0);
	doca_task_free(doca_ec_task_create_as_task(create));

	/* Blocks 1..3 and the redundancy blocks: block 0 is missing. */
	memcpy(a, d + BLOCK, (K - 1) * BLOCK);
	memcpy(a + (K - 1) * BLOCK, r, BLOCK);
	CHECK(doca_ec_matrix_create_recover(ec, coding, missing, 1, &rec));
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, a, K * BLOCK, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, o, BLOCK, &dst));
	memset(&s, 0, sizeof(s));
	s.dst = dst;
	for (i = 0; i < N; i++) {
		CHECK(doca_ec_task_recover_allocate_init(ec, rec, src, dst, tud, &t[i]));
		CHECK(doca_task_submit(doca_ec_task_recover_as_task(t[i])));
	}
	/* Nothing is visible before delivery. */
	CHECK(doca_buf_get_data_len(dst, &len));
	ASSERT(len == 0);
	drain(pe, &s, N);
	ASSERT(s.failed == 0 && s.done == N);
	ASSERT(s.len_at_first_delivery == BLOCK);
	CHECK(doca_buf_get_data_len(dst, &len));
	ASSERT(len == BLOCK);
	ASSERT(memcmp(o, d, BLOCK) == 0);
	for (i = 0; i < N; i++)
		doca_task_free(doca_ec_task_recover_as_task(t[i]));

	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	CHECK(doca_buf_dec_refcount(data, NULL));
	CHECK(doca_buf_dec_refcount(rdnc, NULL));
	CHECK(doca_ec_matrix_destroy(rec));
	CHECK(doca_ec_matrix_destroy(coding));
	CHECK(doca_ctx_stop(doca_ec_as_ctx(ec)));
	CHECK(doca_ec_destroy(ec));
	printf("wild_bufs3: %d recover tasks shared one destination\n", N);
}

static void shared_destination_sha(struct doca_dev *dev, struct doca_pe *pe, struct mem *m)
{
	struct doca_sha *sha;
	struct doca_buf *req, *resp;
	struct doca_sha_task_hash *t[8];
	struct seen s;
	union doca_data ud, tud;
	uint8_t *in = m->bytes + 64 * 1024, *out = in + 4096;
	size_t len;
	int i;

	memset(&s, 0, sizeof(s));
	ud.ptr = &s;
	tud.u64 = 0;
	CHECK(doca_sha_create(dev, &sha));
	CHECK(doca_pe_connect_ctx(pe, doca_sha_as_ctx(sha)));
	CHECK(doca_ctx_set_user_data(doca_sha_as_ctx(sha), ud));
	CHECK(doca_sha_task_hash_set_conf(sha, sha_ok, sha_err, 8));
	CHECK(doca_ctx_start(doca_sha_as_ctx(sha)));
	memset(in, 'a', 1000);
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, in, 1000, &req));
	/* Room for one SHA-256 digest only: eight tasks all write it. */
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, out, 32, &resp));
	for (i = 0; i < 8; i++) {
		CHECK(doca_sha_task_hash_alloc_init(sha, DOCA_SHA_ALGORITHM_SHA256, req, resp, tud, &t[i]));
		CHECK(doca_task_submit(doca_sha_task_hash_as_task(t[i])));
	}
	drain(pe, &s, 8);
	ASSERT(s.failed == 0);
	CHECK(doca_buf_get_data_len(resp, &len));
	ASSERT(len == 32);
	for (i = 0; i < 8; i++)
		doca_task_free(doca_sha_task_hash_as_task(t[i]));
	CHECK(doca_buf_dec_refcount(req, NULL));
	CHECK(doca_buf_dec_refcount(resp, NULL));
	CHECK(doca_ctx_stop(doca_sha_as_ctx(sha)));
	CHECK(doca_sha_destroy(sha));
	printf("wild_bufs3: 8 hash tasks shared one response\n");
}

static void empty_buffers_dma(struct doca_dev *dev, struct doca_pe *pe, struct mem *m)
{
	struct doca_dma *dma;
	struct doca_buf *src, *dst, *far;
	struct doca_dma_task_memcpy *t;
	struct seen s;
	union doca_data ud, tud;
	uint8_t *base = m->bytes + 128 * 1024;
	void *p;
	size_t len;
	int i;

	memset(&s, 0, sizeof(s));
	ud.ptr = &s;
	tud.u64 = 0;
	CHECK(doca_dma_create(dev, &dma));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_set_user_data(doca_dma_as_ctx(dma), ud));
	CHECK(doca_dma_task_memcpy_set_conf(dma, dma_ok, dma_err, 4));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	for (i = 0; i < 8192; i++)
		base[i] = (uint8_t)(i * 3 + 1);

	/* Empty buffers (length 0), pointed elsewhere in the mmap. */
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, base, 0, &src));
	CHECK(doca_buf_get_len(src, &len));
	ASSERT(len == 0);
	CHECK(doca_buf_get_data_len(src, &len));
	ASSERT(len == 0);
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, base + 16384, 0, &dst));
	CHECK(doca_buf_set_data(src, base + 1000, 3000));
	CHECK(doca_buf_get_data(src, &p));
	ASSERT(p == base + 1000);
	CHECK(doca_buf_set_data(dst, base + 20000, 0));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, tud, &t));
	CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
	drain(pe, &s, 1);
	ASSERT(s.failed == 0);
	CHECK(doca_buf_get_data_len(dst, &len));
	ASSERT(len == 3000);
	ASSERT(memcmp(base + 20000, base + 1000, 3000) == 0);
	doca_task_free(doca_dma_task_memcpy_as_task(t));

	/* A data section outside the mmap: set_data takes it, the submit refuses it. */
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, base, 64, &far));
	CHECK(doca_buf_set_data(far, m->bytes + m->len - 100, 200));
	CHECK(doca_buf_reset_data_len(dst));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, far, dst, tud, &t));
	EXPECT_ERR(doca_task_submit(doca_dma_task_memcpy_as_task(t)), DOCA_ERROR_INVALID_VALUE);
	doca_task_free(doca_dma_task_memcpy_as_task(t));
	CHECK(doca_buf_get_data_len(dst, &len));
	ASSERT(len == 0);

	CHECK(doca_buf_dec_refcount(far, NULL));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_destroy(dma));
	printf("wild_bufs3: empty buffers and data sections outside the buffer\n");
}

/* One task, its two buffers moved between submissions (as the storage service does). */
static void reused_buffers_dma(struct doca_dev *dev, struct doca_pe *pe, struct mem *m)
{
	struct doca_dma *dma;
	struct doca_buf *src, *dst, *other;
	struct doca_dma_task_memcpy *t;
	struct seen s;
	union doca_data ud, tud;
	uint8_t *base = m->bytes + 256 * 1024;
	void *p;
	size_t len;
	uint32_t nel;
	int i, round;

	memset(&s, 0, sizeof(s));
	ud.ptr = &s;
	tud.u64 = 0;
	CHECK(doca_dma_create(dev, &dma));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_set_user_data(doca_dma_as_ctx(dma), ud));
	CHECK(doca_dma_task_memcpy_set_conf(dma, dma_ok, dma_err, 4));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	for (i = 0; i < 65536; i++)
		base[i] = (uint8_t)(i * 7 + 3);
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, base, 64, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, base + 65536, 64, &dst));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, tud, &t));
	for (round = 0; round < 8; round++) {
		uint8_t *from = base + round * 4096, *to = base + 65536 + 16384 + round * 2048;

		CHECK(doca_buf_inventory_buf_reuse_by_data(src, from, 1000 + round));
		CHECK(doca_buf_inventory_buf_reuse_by_addr(dst, to, 2048));
		CHECK(doca_buf_get_data(src, &p));
		ASSERT(p == from);
		CHECK(doca_buf_get_len(src, &len));
		ASSERT(len == (size_t)(1000 + round));
		CHECK(doca_buf_get_data_len(dst, &len));
		ASSERT(len == 0);
		CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
		/* Held by a task in flight: not moved. */
		EXPECT_ERR(doca_buf_inventory_buf_reuse_by_addr(dst, base, 64), DOCA_ERROR_IN_USE);
		drain(pe, &s, round + 1);
		ASSERT(s.failed == 0);
		CHECK(doca_buf_get_data_len(dst, &len));
		ASSERT(len == (size_t)(1000 + round));
		ASSERT(memcmp(to, from, 1000 + round) == 0);
	}
	/* Outside the mmap, or data outside the range: refused, the buffer unchanged. */
	EXPECT_ERR(doca_buf_inventory_buf_reuse_by_data(src, m->bytes + m->len - 10, 20), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_buf_inventory_buf_reuse_by_args(src, base, 100, base + 90, 20), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_buf_inventory_buf_reuse_by_addr(NULL, base, 100), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_buf_get_data(src, &p));
	ASSERT(p == base + 7 * 4096);
	/* A list element keeps its place in the list when moved. */
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, base + 30000, 64, &other));
	CHECK(doca_buf_chain_list(src, other));
	CHECK(doca_buf_inventory_buf_reuse_by_data(other, base + 40000, 128));
	CHECK(doca_buf_get_list_len(src, &nel));
	ASSERT(nel == 2);
	CHECK(doca_buf_get_data_len(other, &len));
	ASSERT(len == 128);
	doca_task_free(doca_dma_task_memcpy_as_task(t));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_destroy(dma));
	printf("wild_bufs3: buffers moved with doca_buf_inventory_buf_reuse_by_*\n");
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct doca_pe *pe;
	struct mem m;

	CHECK(doca_pe_create(&pe));
	mem_open(&m, dev, 1 << 20, 16);
	shared_destination_ec(dev, pe, &m);
	shared_destination_sha(dev, pe, &m);
	empty_buffers_dma(dev, pe, &m);
	reused_buffers_dma(dev, pe, &m);
	mem_close(&m);
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_dev_close(dev));
	printf("wild_bufs3: ok\n");
	return 0;
}
