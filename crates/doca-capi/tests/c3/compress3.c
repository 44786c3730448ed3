/* Compress tasks on a progress engine, as DOCA's samples use them, checked against zlib
 * and liblz4 both ways: compress deflate (zlib inflates it), decompress deflate (of what
 * zlib wrote at levels 1 and 9), decompress LZ4 block and LZ4 stream (of what liblz4's
 * frame API wrote, its frame taken off as NVIDIA's sample does: block checksums on and
 * off, linked and independent blocks), the checksums each task reports, buffer lists,
 * and bad input: garbage, truncated data, a bomb against a small destination, a wrong
 * block checksum. A failed task reports INVALID_VALUE, leaves the destination's data
 * length as it was and writes nothing past the destination; as with DOCA's hardware, it
 * also stops its context, which the program starts again. */
#include <endian.h>
#include <doca_compress.h>
#include <lz4.h>
#include <lz4frame.h>
#include <zlib.h>

#include "common3.h"

#define MEM (8u << 20)
#define TEXT (300u * 1024)
#define GUARD 64

struct counter {
	int done, failed;
	doca_error_t last;
};

#define CB(name, type) \
	static void name##_ok(struct type *task, union doca_data t, union doca_data c) \
	{ \
		struct counter *n = c.ptr; \
		(void)t; \
		ASSERT(doca_task_get_status(doca_compress_task_##name##_as_task(task)) == DOCA_SUCCESS); \
		n->done++; \
	} \
	static void name##_err(struct type *task, union doca_data t, union doca_data c) \
	{ \
		struct counter *n = c.ptr; \
		(void)t; \
		n->last = doca_task_get_status(doca_compress_task_##name##_as_task(task)); \
		n->failed++; \
	}

CB(compress_deflate, doca_compress_task_compress_deflate)
CB(decompress_deflate, doca_compress_task_decompress_deflate)
CB(decompress_lz4_stream, doca_compress_task_decompress_lz4_stream)
CB(decompress_lz4_block, doca_compress_task_decompress_lz4_block)

struct env {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_compress *compress;
	struct doca_ctx *ctx;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	struct counter n;
};

/* Progresses until one more task completed or failed: 1 when it succeeded. */
static int wait_one(struct env *e)
{
	int before = e->n.done + e->n.failed;
	long spins = 0;

	while (e->n.done + e->n.failed == before) {
		(void)doca_pe_progress(e->pe);
		ASSERT(++spins < 100000000L);
	}
	return e->n.done + e->n.failed > before && e->n.failed == 0 ? 1 : 0;
}

/* After a failed task (freed): the context stops; start it again. */
static void restart(struct env *e)
{
	enum doca_ctx_states st;
	long spins = 0;

	do {
		(void)doca_pe_progress(e->pe);
		CHECK(doca_ctx_get_state(e->ctx, &st));
		ASSERT(++spins < 100000000L);
	} while (st != DOCA_CTX_STATE_IDLE);
	e->n.failed = 0;
	CHECK(doca_ctx_start(e->ctx));
}

/* xxHash-32 with seed 0 (the LZ4 tasks' second checksum). */
static uint32_t rotl(uint32_t x, int r)
{
	return (x << r) | (x >> (32 - r));
}

static uint32_t xxh32(const uint8_t *p, size_t len)
{
	const uint32_t P1 = 2654435761u, P2 = 2246822519u, P3 = 3266489917u, P4 = 668265263u, P5 = 374761393u;
	const uint8_t *end = p + len;
	uint32_t h, v[4] = {P1 + P2, P2, 0, 0u - P1};
	uint32_t w;
	int i;

	if (len >= 16) {
		while (p + 16 <= end) {
			for (i = 0; i < 4; i++) {
				memcpy(&w, p, 4);
				v[i] = rotl(v[i] + le32toh(w) * P2, 13) * P1;
				p += 4;
			}
		}
		h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
	} else {
		h = P5;
	}
	h += (uint32_t)len;
	while (p + 4 <= end) {
		memcpy(&w, p, 4);
		h = rotl(h + le32toh(w) * P3, 17) * P4;
		p += 4;
	}
	while (p < end)
		h = rotl(h + (*p++) * P5, 11) * P1;
	h ^= h >> 15;
	h *= P2;
	h ^= h >> 13;
	h *= P3;
	h ^= h >> 16;
	return h;
}

static uint32_t crc_of(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(crc32(0L, Z_NULL, 0), p, (uInt)n);
}

static uint32_t adler_of(const uint8_t *p, size_t n)
{
	return (uint32_t)adler32(adler32(0L, Z_NULL, 0), p, (uInt)n);
}

/* Text with variation, then a stretch of bytes that do not compress. */
static void make_text(uint8_t *t, size_t n)
{
	static const char *words[] = {"erasure ", "coding ", "compress ", "deflate ", "block ",
				      "stream ", "storage ", "the ",	 "of ",	      "and\n"};
	uint64_t x = 12345;
	size_t at = 0, k;

	while (at < n) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (at > n - n / 8) {
			t[at++] = (uint8_t)(x >> 56);
			continue;
		}
		for (k = 0; words[(x >> 33) % 10][k] && at < n; k++)
			t[at++] = (uint8_t)words[(x >> 33) % 10][k];
	}
}

static size_t zlib_raw(const uint8_t *in, size_t n, uint8_t *out, size_t room, int level)
{
	z_stream s;

	memset(&s, 0, sizeof(s));
	ASSERT(deflateInit2(&s, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	s.next_in = (Bytef *)(uintptr_t)in;
	s.avail_in = (uInt)n;
	s.next_out = out;
	s.avail_out = (uInt)room;
	ASSERT(deflate(&s, Z_FINISH) == Z_STREAM_END);
	ASSERT(deflateEnd(&s) == Z_OK);
	return s.total_out;
}

static size_t zlib_inflate_raw(const uint8_t *in, size_t n, uint8_t *out, size_t room)
{
	z_stream s;

	memset(&s, 0, sizeof(s));
	ASSERT(inflateInit2(&s, -MAX_WBITS) == Z_OK);
	s.next_in = (Bytef *)(uintptr_t)in;
	s.avail_in = (uInt)n;
	s.next_out = out;
	s.avail_out = (uInt)room;
	ASSERT(inflate(&s, Z_FINISH) == Z_STREAM_END);
	ASSERT(inflateEnd(&s) == Z_OK);
	return s.total_out;
}

static struct doca_buf *data_buf(struct env *e, uint8_t *at, size_t n)
{
	struct doca_buf *b;

	CHECK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, at, n, &b));
	return b;
}

static struct doca_buf *room_buf(struct env *e, uint8_t *at, size_t n)
{
	struct doca_buf *b;

	CHECK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, at, n, &b));
	return b;
}

static void put(struct doca_buf *b)
{
	CHECK(doca_buf_dec_refcount(b, NULL));
}

static size_t data_len(struct doca_buf *b)
{
	size_t n;

	CHECK(doca_buf_get_data_len(b, &n));
	return n;
}

static void guard_set(uint8_t *p)
{
	memset(p, 0xA5, GUARD);
}

static void guard_check(const uint8_t *p)
{
	int i;

	for (i = 0; i < GUARD; i++)
		ASSERT(p[i] == 0xA5);
}

/* Runs one task of a type (its alloc_init's leading arguments in ARGS) from src into a
 * destination of `room` bytes at dst: DOCA_SUCCESS with the output's length in *out, or
 * the task's error with the destination's length still 0 and nothing written past it
 * (the context, stopped by the failure, is started again). */
#define RUN_TASK(E_, NAME_, SRC_, LEN_, DST_, ROOM_, OUT_, ...) \
	({ \
		struct doca_compress_task_##NAME_ *t_; \
		struct doca_buf *s_ = data_buf(E_, SRC_, LEN_), *d_ = room_buf(E_, DST_, ROOM_); \
		union doca_data ud_ = {.u64 = 2}; \
		doca_error_t rr_ = DOCA_SUCCESS; \
		guard_set((DST_) + (ROOM_)); \
		CHECK(doca_compress_task_##NAME_##_alloc_init((E_)->compress, ##__VA_ARGS__, s_, d_, ud_, &t_)); \
		CHECK(doca_task_submit(doca_compress_task_##NAME_##_as_task(t_))); \
		if (!wait_one(E_)) { \
			rr_ = (E_)->n.last; \
			ASSERT(data_len(d_) == 0); \
		} \
		*(OUT_) = data_len(d_); \
		guard_check((DST_) + (ROOM_)); \
		doca_task_free(doca_compress_task_##NAME_##_as_task(t_)); \
		put(s_); \
		put(d_); \
		if (rr_ != DOCA_SUCCESS) \
			restart(E_); \
		rr_; \
	})

static doca_error_t inflate_task(struct env *e, uint8_t *src, size_t n, uint8_t *dst, size_t room, size_t *out)
{
	return RUN_TASK(e, decompress_deflate, src, n, dst, room, out);
}

static void deflate_checks(struct env *e, uint8_t *text)
{
	uint8_t *packed = e->mem + (1u << 20), *back = e->mem + (2u << 20), *z = e->mem + (3u << 20);
	struct doca_compress_task_compress_deflate *c;
	struct doca_buf *s, *d;
	union doca_data ud = {.u64 = 1};
	size_t n, zn;
	int level;

	/* Compress: zlib inflates the raw deflate; the checksums are zlib's of the text. */
	s = data_buf(e, text, TEXT);
	d = room_buf(e, packed, 1u << 20);
	CHECK(doca_compress_task_compress_deflate_alloc_init(e->compress, s, d, ud, &c));
	ASSERT(doca_compress_task_compress_deflate_get_src(c) == s);
	ASSERT(doca_compress_task_compress_deflate_get_dst(c) == d);
	CHECK(doca_task_submit(doca_compress_task_compress_deflate_as_task(c)));
	/* The destination grows when the completion is delivered. */
	ASSERT(data_len(d) == 0);
	ASSERT(wait_one(e));
	n = data_len(d);
	ASSERT(n > 0 && n < TEXT / 2);
	ASSERT(zlib_inflate_raw(packed, n, back, 1u << 20) == TEXT && memcmp(back, text, TEXT) == 0);
	ASSERT(doca_compress_task_compress_deflate_get_crc_cs(c) == crc_of(text, TEXT));
	ASSERT(doca_compress_task_compress_deflate_get_adler_cs(c) == adler_of(text, TEXT));
	doca_task_free(doca_compress_task_compress_deflate_as_task(c));
	put(s);
	put(d);

	/* Decompress what zlib wrote, at levels 1 and 9, with the checksums. */
	for (level = 1; level <= 9; level += 8) {
		struct doca_compress_task_decompress_deflate *t;

		zn = zlib_raw(text, TEXT, z, 1u << 20, level);
		s = data_buf(e, z, zn);
		d = room_buf(e, back, TEXT);
		CHECK(doca_compress_task_decompress_deflate_alloc_init(e->compress, s, d, ud, &t));
		CHECK(doca_task_submit(doca_compress_task_decompress_deflate_as_task(t)));
		ASSERT(wait_one(e));
		ASSERT(data_len(d) == TEXT && memcmp(back, text, TEXT) == 0);
		ASSERT(doca_compress_task_decompress_deflate_get_crc_cs(t) == crc_of(text, TEXT));
		ASSERT(doca_compress_task_decompress_deflate_get_adler_cs(t) == adler_of(text, TEXT));
		doca_task_free(doca_compress_task_decompress_deflate_as_task(t));
		put(s);
		put(d);
	}

	/* Bad input. Garbage: */
	memset(z, 0xff, 4096);
	ASSERT(inflate_task(e, z, 4096, back, 65536, &n) == DOCA_ERROR_INVALID_VALUE);
	/* truncated: */
	zn = zlib_raw(text, TEXT, z, 1u << 20, 6);
	ASSERT(inflate_task(e, z, zn / 2, back, TEXT, &n) == DOCA_ERROR_INVALID_VALUE);
	/* a bomb (1 MiB of zeros) against a 4 KiB destination: */
	memset(back, 0, 1u << 20);
	zn = zlib_raw(back, 1u << 20, z, 1u << 20, 9);
	ASSERT(zn < 4096);
	ASSERT(inflate_task(e, z, zn, back, 4096, &n) == DOCA_ERROR_INVALID_VALUE);
	/* and the same stream into enough room works. */
	ASSERT(inflate_task(e, z, zn, e->mem + (5u << 20), (1u << 20) + 16, &n) == DOCA_SUCCESS && n == (1u << 20));
}

/* liblz4's frame of `n` bytes of text: the blocks between its header and its end mark
 * go to `blocks` (as NVIDIA's sample takes the frame off); the content checksum to
 * *content. */
static size_t lz4_frame_blocks(const uint8_t *text, size_t n, int block_checksum, int independent, uint8_t *frame,
			       uint8_t **blocks, uint32_t *content)
{
	LZ4F_preferences_t p;
	size_t fn, hdr;
	uint32_t le;

	memset(&p, 0, sizeof(p));
	p.frameInfo.blockSizeID = LZ4F_max64KB;
	p.frameInfo.blockMode = independent ? LZ4F_blockIndependent : LZ4F_blockLinked;
	p.frameInfo.blockChecksumFlag = block_checksum ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum;
	p.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
	fn = LZ4F_compressFrame(frame, LZ4F_compressFrameBound(n, &p), text, n, &p);
	ASSERT(!LZ4F_isError(fn));
	/* Magic (4), FLG, BD, header checksum: 7 bytes without a content size. */
	hdr = 7;
	memcpy(&le, frame + fn - 4, 4);
	*content = le32toh(le);
	*blocks = frame + hdr;
	/* Less the end mark (4) and the content checksum (4). */
	return fn - hdr - 8;
}

static void lz4_checks(struct env *e, uint8_t *text)
{
	uint8_t *frame = e->mem + (4u << 20), *back = e->mem + (5u << 20), *blk = e->mem + (6u << 20);
	union doca_data ud = {.u64 = 3};
	struct doca_buf *s, *d;
	int bc, ind, k;
	size_t n, n2;

	/* Streams, the four kinds. */
	for (k = 0; k < 4; k++) {
		struct doca_compress_task_decompress_lz4_stream *t;
		uint32_t content;
		uint8_t *blocks;

		bc = k & 1;
		ind = (k >> 1) & 1;
		n = lz4_frame_blocks(text, TEXT, bc, ind, frame, &blocks, &content);
		s = data_buf(e, blocks, n);
		d = room_buf(e, back, TEXT);
		CHECK(doca_compress_task_decompress_lz4_stream_alloc_init(e->compress, (uint8_t)bc, (uint8_t)ind, s, d,
									 ud, &t));
		ASSERT(doca_compress_task_decompress_lz4_stream_get_has_block_checksum(t) == bc);
		ASSERT(doca_compress_task_decompress_lz4_stream_get_are_blocks_independent(t) == ind);
		CHECK(doca_task_submit(doca_compress_task_decompress_lz4_stream_as_task(t)));
		ASSERT(wait_one(e));
		ASSERT(data_len(d) == TEXT && memcmp(back, text, TEXT) == 0);
		ASSERT(doca_compress_task_decompress_lz4_stream_get_crc_cs(t) == crc_of(text, TEXT));
		/* As NVIDIA's sample compares it: with htobe32() of the frame's checksum. */
		ASSERT(doca_compress_task_decompress_lz4_stream_get_xxh_cs(t) == htobe32(content));
		ASSERT(content == xxh32(text, TEXT));

		doca_task_free(doca_compress_task_decompress_lz4_stream_as_task(t));
		put(s);
		put(d);

		/* Bad input: too small a destination, */
		ASSERT(RUN_TASK(e, decompress_lz4_stream, blocks, n, back, 1000, &n2, (uint8_t)bc, (uint8_t)ind) ==
		       DOCA_ERROR_INVALID_VALUE);
		/* truncated inside a block, */
		ASSERT(RUN_TASK(e, decompress_lz4_stream, blocks, n / 3, back, TEXT, &n2, (uint8_t)bc, (uint8_t)ind) ==
		       DOCA_ERROR_INVALID_VALUE);
		if (bc) {
			/* a flipped byte inside the first block: its checksum no longer matches. */
			blocks[4 + 10] ^= 1;
			ASSERT(RUN_TASK(e, decompress_lz4_stream, blocks, n, back, TEXT, &n2, (uint8_t)bc,
					(uint8_t)ind) == DOCA_ERROR_INVALID_VALUE);
		}
	}

	/* One block, with the checksums; then a block whose match points before its start. */
	{
		struct doca_compress_task_decompress_lz4_block *t;
		int bn = LZ4_compress_default((const char *)text, (char *)blk, 65536, LZ4_compressBound(65536));

		ASSERT(bn > 0);
		s = data_buf(e, blk, (size_t)bn);
		d = room_buf(e, back, 65536);
		CHECK(doca_compress_task_decompress_lz4_block_alloc_init(e->compress, s, d, ud, &t));
		CHECK(doca_task_submit(doca_compress_task_decompress_lz4_block_as_task(t)));
		ASSERT(wait_one(e));
		ASSERT(data_len(d) == 65536 && memcmp(back, text, 65536) == 0);
		ASSERT(doca_compress_task_decompress_lz4_block_get_crc_cs(t) == crc_of(text, 65536));
		ASSERT(doca_compress_task_decompress_lz4_block_get_xxh_cs(t) == htobe32(xxh32(text, 65536)));
		doca_task_free(doca_compress_task_decompress_lz4_block_as_task(t));
		put(s);
		put(d);
		/* token: 1 literal, then a match; offset 100 with only 1 byte before it. */
		blk[0] = 0x10;
		blk[1] = 'x';
		blk[2] = 100;
		blk[3] = 0;
		blk[4] = 0x00;
		ASSERT(RUN_TASK(e, decompress_lz4_block, blk, 5, back, 4096, &n) == DOCA_ERROR_INVALID_VALUE);
	}
}

/* A source of three buffers compressed, decompressed into a list of three. */
static void list_checks(struct env *e, uint8_t *text)
{
	uint8_t *packed = e->mem + (1u << 20), *back = e->mem + (2u << 20);
	struct doca_compress_task_compress_deflate *c;
	struct doca_compress_task_decompress_deflate *t;
	struct doca_buf *s, *s2, *s3, *d, *d2, *d3, *p;
	union doca_data ud = {.u64 = 4};
	uint32_t max_list = 0;
	size_t n;

	CHECK(doca_compress_cap_task_compress_deflate_get_max_buf_list_len(doca_dev_as_devinfo(e->dev), &max_list));
	ASSERT(max_list >= 3);
	s = data_buf(e, text, 1000);
	s2 = data_buf(e, text + 1000, 50000);
	s3 = data_buf(e, text + 51000, 49000);
	CHECK(doca_buf_chain_list(s, s2));
	CHECK(doca_buf_chain_list(s, s3));
	p = room_buf(e, packed, 1u << 20);
	CHECK(doca_compress_task_compress_deflate_alloc_init(e->compress, s, p, ud, &c));
	CHECK(doca_task_submit(doca_compress_task_compress_deflate_as_task(c)));
	ASSERT(wait_one(e));
	ASSERT(doca_compress_task_compress_deflate_get_crc_cs(c) == crc_of(text, 100000));
	n = data_len(p);
	ASSERT(n > 0 && n < 100000);
	doca_task_free(doca_compress_task_compress_deflate_as_task(c));
	CHECK(doca_buf_dec_refcount(s, NULL));

	d = room_buf(e, back, 30000);
	d2 = room_buf(e, back + 40000, 30000);
	d3 = room_buf(e, back + 80000, 60000);
	CHECK(doca_buf_chain_list(d, d2));
	CHECK(doca_buf_chain_list(d, d3));
	CHECK(doca_compress_task_decompress_deflate_alloc_init(e->compress, p, d, ud, &t));
	CHECK(doca_task_submit(doca_compress_task_decompress_deflate_as_task(t)));
	ASSERT(wait_one(e));
	ASSERT(doca_compress_task_decompress_deflate_get_adler_cs(t) == adler_of(text, 100000));
	ASSERT(data_len(d) == 30000 && data_len(d2) == 30000 && data_len(d3) == 40000);
	ASSERT(memcmp(back, text, 30000) == 0 && memcmp(back + 40000, text + 30000, 30000) == 0 &&
	       memcmp(back + 80000, text + 60000, 40000) == 0);
	doca_task_free(doca_compress_task_decompress_deflate_as_task(t));
	put(p);
	CHECK(doca_buf_dec_refcount(d, NULL));
}

int main(void)
{
	struct env e;
	struct doca_devinfo **list;
	uint32_t n = 0, i, max_tasks = 0;
	uint64_t max_size = 0;
	union doca_data ud;
	enum doca_ctx_states st;
	long spins = 0;
	doca_error_t r;

	memset(&e, 0, sizeof(e));
	/* The first device that compresses, as DOCA's samples look for one. */
	CHECK(doca_devinfo_create_list(&list, &n));
	for (i = 0; i < n && e.dev == NULL; i++)
		if (doca_compress_cap_task_compress_deflate_is_supported(list[i]) == DOCA_SUCCESS &&
		    doca_compress_cap_task_decompress_lz4_stream_is_supported(list[i]) == DOCA_SUCCESS)
			CHECK(doca_dev_open(list[i], &e.dev));
	CHECK(doca_devinfo_destroy_list(list));
	ASSERT(e.dev != NULL);
	CHECK(doca_compress_cap_task_decompress_deflate_get_max_buf_size(doca_dev_as_devinfo(e.dev), &max_size));
	ASSERT(max_size >= TEXT);
	CHECK(doca_compress_cap_task_decompress_lz4_block_is_supported(doca_dev_as_devinfo(e.dev)));
	EXPECT_ERR(doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(NULL, &max_size),
		   DOCA_ERROR_INVALID_VALUE);

	e.mem = aligned_alloc(4096, MEM + 4096);
	ASSERT(e.mem != NULL);
	CHECK(doca_mmap_create(&e.mmap));
	CHECK(doca_mmap_set_memrange(e.mmap, e.mem, MEM + 4096));
	CHECK(doca_mmap_set_permissions(e.mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(doca_mmap_add_dev(e.mmap, e.dev));
	CHECK(doca_mmap_start(e.mmap));
	CHECK(doca_buf_inventory_create(64, &e.inv));
	CHECK(doca_buf_inventory_start(e.inv));
	CHECK(doca_pe_create(&e.pe));

	CHECK(doca_compress_create(e.dev, &e.compress));
	e.ctx = doca_compress_as_ctx(e.compress);
	CHECK(doca_compress_cap_get_max_num_tasks(e.compress, &max_tasks));
	ASSERT(max_tasks >= 4);
	CHECK(doca_pe_connect_ctx(e.pe, e.ctx));
	ud.ptr = &e.n;
	CHECK(doca_ctx_set_user_data(e.ctx, ud));
	CHECK(doca_compress_task_compress_deflate_set_conf(e.compress, compress_deflate_ok, compress_deflate_err, 2));
	CHECK(doca_compress_task_decompress_deflate_set_conf(e.compress, decompress_deflate_ok, decompress_deflate_err,
							     2));
	CHECK(doca_compress_task_decompress_lz4_stream_set_conf(e.compress, decompress_lz4_stream_ok,
								decompress_lz4_stream_err, 2));
	CHECK(doca_compress_task_decompress_lz4_block_set_conf(e.compress, decompress_lz4_block_ok,
							       decompress_lz4_block_err, 2));
	CHECK(doca_ctx_start(e.ctx));

	make_text(e.mem, TEXT);
	deflate_checks(&e, e.mem);
	lz4_checks(&e, e.mem);
	list_checks(&e, e.mem);

	r = doca_ctx_stop(e.ctx);
	ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
	do {
		(void)doca_pe_progress(e.pe);
		CHECK(doca_ctx_get_state(e.ctx, &st));
		ASSERT(++spins < 100000000L);
	} while (st != DOCA_CTX_STATE_IDLE);
	CHECK(doca_compress_destroy(e.compress));
	CHECK(doca_pe_destroy(e.pe));
	CHECK(doca_buf_inventory_destroy(e.inv));
	CHECK(doca_mmap_destroy(e.mmap));
	CHECK(doca_dev_close(e.dev));
	free(e.mem);
	printf("compress3: ok (%d tasks)\n", e.n.done);
	return 0;
}
