/* SHA and erasure coding tasks on a progress engine, as DOCA's samples use them: a hash,
 * a partial hash over segments, and EC create, recover, update and galois_mul, each
 * checked against a reference computed here. */
#include <doca_erasure_coding.h>
#include <doca_sha.h>

#include "common3.h"

#define DATA_BLOCKS 4
#define RDNC_BLOCKS 2
#define BLOCK 1024

struct counter {
	int done, failed;
};

static void ok_cb(struct doca_task *task, union doca_data t, union doca_data c)
{
	struct counter *n = c.ptr;

	(void)t;
	ASSERT(doca_task_get_status(task) == DOCA_SUCCESS);
	n->done++;
}

static void err_cb(struct doca_task *task, union doca_data t, union doca_data c)
{
	struct counter *n = c.ptr;

	(void)t;
	fprintf(stderr, "task failed: %s\n", doca_error_get_descr(doca_task_get_status(task)));
	n->failed++;
}

#define SHA_CB(name, type) \
	static void name##_ok(struct type *task, union doca_data t, union doca_data c) \
	{ \
		ok_cb((struct doca_task *)task, t, c); \
	} \
	static void name##_err(struct type *task, union doca_data t, union doca_data c) \
	{ \
		err_cb((struct doca_task *)task, t, c); \
	}

SHA_CB(hash, doca_sha_task_hash)
SHA_CB(partial, doca_sha_task_partial_hash)
SHA_CB(create, doca_ec_task_create)
SHA_CB(recover, doca_ec_task_recover)
SHA_CB(update, doca_ec_task_update)
SHA_CB(gmul, doca_ec_task_galois_mul)

static void wait_done(struct doca_pe *pe, struct counter *n, int target)
{
	long spins = 0;

	while (n->done + n->failed < target) {
		(void)doca_pe_progress(pe);
		ASSERT(++spins < 100000000L);
	}
	ASSERT(n->failed == 0);
}

static void stop(struct doca_pe *pe, struct doca_ctx *ctx)
{
	enum doca_ctx_states st;
	long spins = 0;
	doca_error_t s = doca_ctx_stop(ctx);

	ASSERT(s == DOCA_SUCCESS || s == DOCA_ERROR_IN_PROGRESS);
	do {
		(void)doca_pe_progress(pe);
		CHECK(doca_ctx_get_state(ctx, &st));
		ASSERT(++spins < 100000000L);
	} while (st != DOCA_CTX_STATE_IDLE);
}

/* SHA-256 of "abc" and of one million 'a's (FIPS 180-2 test vectors). */
static const uint8_t ABC256[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
				   0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
				   0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
static const uint8_t MILLION_A256[32] = {0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7,
					 0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97,
					 0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};

static void sha_checks(struct doca_dev *dev, struct doca_pe *pe, struct mem *m)
{
	struct doca_devinfo *info = doca_dev_as_devinfo(dev);
	struct doca_sha *sha;
	struct doca_ctx *ctx;
	struct counter n = {0};
	union doca_data ud = {.ptr = &n}, tud = {.u64 = 1};
	struct doca_sha_task_hash *hash;
	struct doca_sha_task_partial_hash *part;
	struct doca_buf *src, *dst;
	uint32_t min_dst, block;
	uint64_t max_src;
	void *digest;
	size_t len, total = 1000000, off;
	uint8_t *text = m->bytes, *out = m->bytes + 1100000;

	CHECK(doca_sha_cap_task_hash_get_supported(info, DOCA_SHA_ALGORITHM_SHA256));
	CHECK(doca_sha_cap_task_partial_hash_get_supported(info, DOCA_SHA_ALGORITHM_SHA256));
	EXPECT_ERR(doca_sha_cap_task_hash_get_supported(info, (enum doca_sha_algorithm)7), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_sha_cap_get_min_dst_buf_size(info, DOCA_SHA_ALGORITHM_SHA256, &min_dst));
	ASSERT(min_dst == 32);
	CHECK(doca_sha_cap_get_max_src_buf_size(info, &max_src));
	ASSERT(max_src >= total);
	CHECK(doca_sha_cap_get_partial_hash_block_size(info, DOCA_SHA_ALGORITHM_SHA256, &block));
	ASSERT(block == 64);

	CHECK(doca_sha_create(dev, &sha));
	ctx = doca_sha_as_ctx(sha);
	CHECK(doca_pe_connect_ctx(pe, ctx));
	CHECK(doca_ctx_set_user_data(ctx, ud));
	CHECK(doca_sha_task_hash_set_conf(sha, hash_ok, hash_err, 2));
	CHECK(doca_sha_task_partial_hash_set_conf(sha, partial_ok, partial_err, 0));
	CHECK(doca_ctx_start(ctx));

	/* One shot: "abc". */
	memcpy(text, "abc", 3);
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, text, 3, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, out, 64, &dst));
	CHECK(doca_sha_task_hash_alloc_init(sha, DOCA_SHA_ALGORITHM_SHA256, src, dst, tud, &hash));
	ASSERT(doca_sha_task_hash_get_algorithm(hash) == DOCA_SHA_ALGORITHM_SHA256);
	ASSERT(doca_sha_task_hash_get_src(hash) == src && doca_sha_task_hash_get_dst(hash) == dst);
	CHECK(doca_task_submit(doca_sha_task_hash_as_task(hash)));
	wait_done(pe, &n, 1);
	CHECK(doca_buf_get_data(dst, &digest));
	CHECK(doca_buf_get_data_len(dst, &len));
	ASSERT(len == 32 && memcmp(digest, ABC256, 32) == 0);
	doca_task_free(doca_sha_task_hash_as_task(hash));
	CHECK(doca_buf_dec_refcount(src, NULL));

	/* Partial: one million 'a's in segments of 64 KiB, the last marked final. */
	memset(text, 'a', total);
	CHECK(doca_buf_reset_data_len(dst));
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, text, total, &src));
	CHECK(doca_buf_set_data(src, text, 65536));
	CHECK(doca_sha_task_partial_hash_alloc_init(sha, DOCA_SHA_ALGORITHM_SHA256, src, dst, tud, &part));
	/* The first segment cannot be the final one. */
	CHECK(doca_sha_task_partial_hash_set_is_final_buf(part));
	ASSERT(doca_sha_task_partial_hash_get_is_final(part) == 1);
	EXPECT_ERR(doca_task_submit(doca_sha_task_partial_hash_as_task(part)), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_sha_task_partial_hash_reset(part));
	ASSERT(doca_sha_task_partial_hash_get_is_final(part) == 0);
	n.done = 0;
	for (off = 0; off < total;) {
		size_t seg = total - off > 65536 ? 65536 : total - off;

		CHECK(doca_buf_set_data(src, text + off, seg));
		CHECK(doca_sha_task_partial_hash_set_src(part, src));
		if (off + seg == total)
			CHECK(doca_sha_task_partial_hash_set_is_final_buf(part));
		CHECK(doca_task_submit(doca_sha_task_partial_hash_as_task(part)));
		wait_done(pe, &n, n.done + 1);
		off += seg;
		if (off < total) {
			ASSERT(doca_sha_task_partial_hash_get_has_result(part) == 0);
			/* Mid-session, the destination and algorithm stay. */
			EXPECT_ERR(doca_sha_task_partial_hash_set_dst(part, dst), DOCA_ERROR_BAD_STATE);
		}
	}
	ASSERT(doca_sha_task_partial_hash_get_has_result(part) == 1);
	CHECK(doca_buf_get_data(dst, &digest));
	CHECK(doca_buf_get_data_len(dst, &len));
	ASSERT(len == 32 && memcmp(digest, MILLION_A256, 32) == 0);
	doca_task_free(doca_sha_task_partial_hash_as_task(part));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	stop(pe, ctx);
	CHECK(doca_sha_destroy(sha));
}

static void ec_checks(struct doca_dev *dev, struct doca_pe *pe, struct mem *m)
{
	struct doca_devinfo *info = doca_dev_as_devinfo(dev);
	struct doca_ec *ec;
	struct doca_ctx *ctx;
	struct doca_ec_matrix *coding, *rec, *upd;
	struct counter n = {0};
	union doca_data ud = {.ptr = &n}, tud = {.u64 = 0};
	struct doca_ec_task_create *create;
	struct doca_ec_task_recover *recover;
	struct doca_ec_task_update *update;
	struct doca_ec_task_galois_mul *gmul;
	struct doca_buf *data, *rdnc, *avail, *out, *usrc, *gout;
	uint8_t *d = m->bytes, *r = d + DATA_BLOCKS * BLOCK, *a = r + RDNC_BLOCKS * BLOCK;
	uint8_t *o = a + DATA_BLOCKS * BLOCK, *u = o + DATA_BLOCKS * BLOCK, *uo = u + 8 * BLOCK;
	uint8_t *g = uo + RDNC_BLOCKS * BLOCK;
	uint32_t missing[] = {0, 2}, updated[] = {1};
	uint64_t max_block;
	uint32_t max_list;
	int i;

	CHECK(doca_ec_cap_task_create_is_supported(info));
	CHECK(doca_ec_cap_task_recover_is_supported(info));
	CHECK(doca_ec_cap_task_update_is_supported(info));
	CHECK(doca_ec_cap_task_galois_mul_is_supported(info));
	CHECK(doca_ec_cap_get_max_block_size(info, &max_block));
	ASSERT(max_block >= BLOCK);
	CHECK(doca_ec_cap_get_max_buf_list_len(info, &max_list));
	ASSERT(max_list >= 1);

	CHECK(doca_ec_create(dev, &ec));
	ctx = doca_ec_as_ctx(ec);
	CHECK(doca_pe_connect_ctx(pe, ctx));
	CHECK(doca_ctx_set_user_data(ctx, ud));
	CHECK(doca_ec_task_create_set_conf(ec, create_ok, create_err, 1));
	CHECK(doca_ec_task_recover_set_conf(ec, recover_ok, recover_err, 1));
	CHECK(doca_ec_task_update_set_conf(ec, update_ok, update_err, 1));
	CHECK(doca_ec_task_galois_mul_set_conf(ec, gmul_ok, gmul_err, 1));
	CHECK(doca_ctx_start(ctx));
	CHECK(doca_ec_matrix_create(ec, DOCA_EC_MATRIX_TYPE_CAUCHY, DATA_BLOCKS, RDNC_BLOCKS, &coding));

	for (i = 0; i < DATA_BLOCKS * BLOCK; i++)
		d[i] = (uint8_t)(i * 7 + 3);
	/* create: the redundancy blocks. */
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, d, DATA_BLOCKS * BLOCK, &data));
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, r, RDNC_BLOCKS * BLOCK, &rdnc));
	CHECK(doca_ec_task_create_allocate_init(ec, coding, data, rdnc, tud, &create));
	ASSERT(doca_ec_task_create_get_coding_matrix(create) == coding);
	ASSERT(doca_ec_task_create_get_original_data_blocks(create) == data);
	ASSERT(doca_ec_task_create_get_rdnc_blocks(create) == rdnc);
	CHECK(doca_task_submit(doca_ec_task_create_as_task(create)));
	wait_done(pe, &n, 1);
	doca_task_free(doca_ec_task_create_as_task(create));

	/* galois_mul with the coding matrix gives the same redundancy blocks. */
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, g, RDNC_BLOCKS * BLOCK, &gout));
	CHECK(doca_ec_task_galois_mul_allocate_init(ec, coding, data, gout, tud, &gmul));
	CHECK(doca_task_submit(doca_ec_task_galois_mul_as_task(gmul)));
	wait_done(pe, &n, 2);
	ASSERT(memcmp(g, r, RDNC_BLOCKS * BLOCK) == 0);
	doca_task_free(doca_ec_task_galois_mul_as_task(gmul));

	/* recover blocks 0 and 2 from blocks 1, 3 and both redundancy blocks. */
	memcpy(a, d + 1 * BLOCK, BLOCK);
	memcpy(a + BLOCK, d + 3 * BLOCK, BLOCK);
	memcpy(a + 2 * BLOCK, r, RDNC_BLOCKS * BLOCK);
	CHECK(doca_ec_matrix_create_recover(ec, coding, missing, 2, &rec));
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, a, DATA_BLOCKS * BLOCK, &avail));
	CHECK(doca_buf_inventory_buf_get_by_addr(m->inv, m->mmap, o, 2 * BLOCK, &out));
	CHECK(doca_ec_task_recover_allocate_init(ec, rec, avail, out, tud, &recover));
	CHECK(doca_task_submit(doca_ec_task_recover_as_task(recover)));
	wait_done(pe, &n, 3);
	ASSERT(memcmp(o, d, BLOCK) == 0 && memcmp(o + BLOCK, d + 2 * BLOCK, BLOCK) == 0);
	doca_task_free(doca_ec_task_recover_as_task(recover));

	/* update block 1: old, new, then the old redundancy blocks. */
	memcpy(u, d + BLOCK, BLOCK);
	for (i = 0; i < BLOCK; i++)
		u[BLOCK + i] = (uint8_t)(i ^ 0x5a);
	memcpy(u + 2 * BLOCK, r, RDNC_BLOCKS * BLOCK);
	CHECK(doca_ec_matrix_create_update(ec, coding, updated, 1, &upd));
	CHECK(doca_buf_inventory_buf_get_by_data(m->inv, m->mmap, u, (2 + RDNC_BLOCKS) * BLOCK, &usrc));
	CHECK(doca_buf_reset_data_len(out));
	CHECK(doca_ec_task_update_allocate_init(ec, upd, usrc, out, tud, &update));
	CHECK(doca_task_submit(doca_ec_task_update_as_task(update)));
	wait_done(pe, &n, 4);
	doca_task_free(doca_ec_task_update_as_task(update));
	/* The updated redundancy equals a fresh create over the updated data. */
	memcpy(d + BLOCK, u + BLOCK, BLOCK);
	CHECK(doca_buf_reset_data_len(rdnc));
	CHECK(doca_ec_task_create_allocate_init(ec, coding, data, rdnc, tud, &create));
	CHECK(doca_task_submit(doca_ec_task_create_as_task(create)));
	wait_done(pe, &n, 5);
	doca_task_free(doca_ec_task_create_as_task(create));
	ASSERT(memcmp(o, r, RDNC_BLOCKS * BLOCK) == 0);

	CHECK(doca_buf_dec_refcount(data, NULL));
	CHECK(doca_buf_dec_refcount(rdnc, NULL));
	CHECK(doca_buf_dec_refcount(avail, NULL));
	CHECK(doca_buf_dec_refcount(out, NULL));
	CHECK(doca_buf_dec_refcount(usrc, NULL));
	CHECK(doca_buf_dec_refcount(gout, NULL));
	CHECK(doca_ec_matrix_destroy(upd));
	CHECK(doca_ec_matrix_destroy(rec));
	CHECK(doca_ec_matrix_destroy(coding));
	stop(pe, ctx);
	CHECK(doca_ec_destroy(ec));
}

int main(void)
{
	struct doca_dev *dev = open_dma_device();
	struct doca_pe *pe;
	struct mem m;

	mem_open(&m, dev, 2 << 20, 32);
	CHECK(doca_pe_create(&pe));
	sha_checks(dev, pe, &m);
	ec_checks(dev, pe, &m);
	CHECK(doca_pe_destroy(pe));
	mem_close(&m);
	CHECK(doca_dev_close(dev));
	printf("sha_ec3: ok\n");
	return 0;
}
