/* DOCA 2.2's compress jobs on a work queue, as its compress_deflate sample and
 * file_compression application use them: compress deflate (zlib inflates it) with the
 * checksums written through output_chksum (zlib's CRC-32 low, Adler-32 high),
 * decompress deflate of what zlib wrote, and a corrupt stream: the job fails in its
 * event, the destination keeps its length and output_chksum is not written. */
#include "common.h"
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_compress.h>
#include <doca_mmap.h>
#include <zlib.h>

#define TEXT (200 * 1024)

int main(void)
{
	struct doca_dev *dev = open_first_device();
	struct doca_compress *compress;
	struct doca_workq *wq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_event ev;
	uint8_t *mem = calloc(1, 4 << 20), *packed = mem + (1 << 20), *back = mem + (2 << 20);
	uint64_t max_size, sums = 0, expect;
	uint32_t max_elems;
	size_t len, i;
	uLongf blen;
	z_stream z;

	ASSERT(mem != NULL);
	for (i = 0; i < TEXT; i++)
		mem[i] = (uint8_t)("compress deflate jobs\n"[i % 22] + (i / 4096) % 3);
	CHECK(doca_compress_create(&compress));
	CHECK(doca_compress_job_get_supported(doca_dev_as_devinfo(dev), DOCA_COMPRESS_DEFLATE_JOB));
	CHECK(doca_compress_job_get_supported(doca_dev_as_devinfo(dev), DOCA_DECOMPRESS_DEFLATE_JOB));
	CHECK(doca_compress_get_max_buf_size(doca_dev_as_devinfo(dev), DOCA_COMPRESS_DEFLATE_JOB, &max_size));
	ASSERT(max_size >= TEXT);
	CHECK(doca_compress_get_max_list_buf_num_elem(doca_dev_as_devinfo(dev), &max_elems));
	ASSERT(max_elems >= 1);
	CHECK(doca_ctx_dev_add(doca_compress_as_ctx(compress), dev));
	CHECK(doca_ctx_start(doca_compress_as_ctx(compress)));
	CHECK(doca_workq_create(4, &wq));
	CHECK(doca_ctx_workq_add(doca_compress_as_ctx(compress), wq));
	CHECK(doca_mmap_create(NULL, &mmap));
	CHECK(doca_mmap_set_memrange(mmap, mem, 4 << 20));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(NULL, 16, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));
	expect = ((uint64_t)adler32(adler32(0L, Z_NULL, 0), mem, TEXT) << 32) | crc32(crc32(0L, Z_NULL, 0), mem, TEXT);

	/* Compress: the checksums land in sums; zlib inflates the raw deflate. */
	CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, TEXT, &src));
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, packed, 1 << 20, &dst));
	{
		struct doca_compress_deflate_job job = {
			.base = {.type = DOCA_COMPRESS_DEFLATE_JOB, .flags = DOCA_JOB_FLAGS_NONE,
				 .ctx = doca_compress_as_ctx(compress), .user_data.u64 = 7},
			.dst_buff = dst,
			.src_buff = src,
			.output_chksum = &sums,
		};
		CHECK(doca_workq_submit(wq, &job.base));
		CHECK(wait_event(wq, &ev));
		ASSERT(ev.type == DOCA_COMPRESS_DEFLATE_JOB && ev.user_data.u64 == 7);
		ASSERT(sums == expect);
	}
	CHECK(doca_buf_get_data_len(dst, &len));
	ASSERT(len > 0 && len < TEXT / 4);
	memset(&z, 0, sizeof(z));
	ASSERT(inflateInit2(&z, -MAX_WBITS) == Z_OK);
	z.next_in = packed;
	z.avail_in = (uInt)len;
	z.next_out = back;
	z.avail_out = 1 << 20;
	ASSERT(inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == TEXT);
	ASSERT(inflateEnd(&z) == Z_OK && memcmp(back, mem, TEXT) == 0);
	CHECK(doca_buf_refcount_rm(src, NULL));
	CHECK(doca_buf_refcount_rm(dst, NULL));

	/* Decompress zlib's stream (a zlib frame: its 2-byte header and 4-byte trailer off). */
	blen = 1 << 20;
	ASSERT(compress2(packed, &blen, mem, TEXT, 9) == Z_OK);
	CHECK(doca_buf_inventory_buf_by_data(inv, mmap, packed + 2, blen - 6, &src));
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, back, TEXT, &dst));
	memset(back, 0, TEXT);
	sums = 0;
	{
		struct doca_compress_deflate_job job = {
			.base = {.type = DOCA_DECOMPRESS_DEFLATE_JOB, .ctx = doca_compress_as_ctx(compress)},
			.dst_buff = dst,
			.src_buff = src,
			.output_chksum = &sums,
		};
		CHECK(doca_workq_submit(wq, &job.base));
		CHECK(wait_event(wq, &ev));
		ASSERT(sums == expect);
		CHECK(doca_buf_get_data_len(dst, &len));
		ASSERT(len == TEXT && memcmp(back, mem, TEXT) == 0);

		/* Corrupt: the job fails in its event; nothing changes. */
		CHECK(doca_buf_reset_data_len(dst));
		packed[2 + 5] ^= 0x55;
		packed[2 + 6] ^= 0xff;
		memset(packed + 2 + 100, 0xff, 64);
		sums = 1;
		CHECK(doca_workq_submit(wq, &job.base));
		EXPECT_ERR(wait_event(wq, &ev), DOCA_ERROR_IO_FAILED);
		ASSERT((doca_error_t)ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
		ASSERT(sums == 1);
		CHECK(doca_buf_get_data_len(dst, &len));
		ASSERT(len == 0);
	}
	CHECK(doca_buf_refcount_rm(src, NULL));
	CHECK(doca_buf_refcount_rm(dst, NULL));

	CHECK(doca_ctx_workq_rm(doca_compress_as_ctx(compress), wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(doca_compress_as_ctx(compress)));
	CHECK(doca_ctx_dev_rm(doca_compress_as_ctx(compress), dev));
	CHECK(doca_compress_destroy(compress));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("compress22: ok\n");
	return 0;
}
