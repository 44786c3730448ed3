/* DMA local copy (one buffer and a scatter-gather list) and SHA one-shot and partial
 * digests, on one work queue serving both contexts. */
#include "common.h"
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_mmap.h>
#include <doca_sha.h>

static const uint8_t SHA256_ABC[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
				       0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
				       0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
static const uint8_t SHA1_ABC[20] = {0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a, 0xba, 0x3e,
				     0x25, 0x71, 0x78, 0x50, 0xc2, 0x6c, 0x9c, 0xd0, 0xd8, 0x9d};

int main(void)
{
	struct doca_dev *dev = open_first_device();
	struct doca_dma *dma;
	struct doca_sha *sha;
	struct doca_workq *wq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst, *src2, *req, *resp;
	struct doca_event ev;
	uint8_t *mem = calloc(1, 1 << 20);
	uint64_t max_size;
	uint32_t min_dst, max_elems;
	size_t len;
	void *p;
	int i;

	ASSERT(mem != NULL);
	CHECK(doca_dma_create(&dma));
	CHECK(doca_sha_create(&sha));
	CHECK(doca_dma_get_max_buf_size(doca_dev_as_devinfo(dev), &max_size));
	ASSERT(max_size >= 1 << 20);
	CHECK(doca_dma_get_max_list_buf_num_elem(doca_dev_as_devinfo(dev), &max_elems));
	ASSERT(max_elems >= 2);
	CHECK(doca_sha_get_min_dst_buffer_size(doca_dev_as_devinfo(dev), DOCA_SHA_JOB_SHA512, &min_dst));
	ASSERT(min_dst == DOCA_SHA512_BYTE_COUNT);
	CHECK(doca_sha_get_hardware_supported(doca_dev_as_devinfo(dev)));
	CHECK(doca_ctx_dev_add(doca_dma_as_ctx(dma), dev));
	CHECK(doca_ctx_dev_add(doca_sha_as_ctx(sha), dev));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_start(doca_sha_as_ctx(sha)));
	CHECK(doca_workq_create(16, &wq));
	CHECK(doca_ctx_workq_add(doca_dma_as_ctx(dma), wq));
	CHECK(doca_ctx_workq_add(doca_sha_as_ctx(sha), wq));

	CHECK(doca_mmap_create(NULL, &mmap));
	CHECK(doca_mmap_set_memrange(mmap, mem, 1 << 20));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(NULL, 16, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));

	/* DMA: 100 KiB from the start of the map to 512 KiB; then a 2-element list. */
	for (i = 0; i < 100 * 1024; i++)
		mem[i] = (uint8_t)(i * 31 + 7);
	CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, 100 * 1024, &src));
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + (512 << 10), 256 * 1024, &dst));
	{
		struct doca_dma_job_memcpy job = {
			.base = {.type = DOCA_DMA_JOB_MEMCPY, .flags = DOCA_JOB_FLAGS_NONE, .ctx = doca_dma_as_ctx(dma)},
			.dst_buff = dst,
			.src_buff = src,
		};
		job.base.user_data.u64 = 0xD3A;
		CHECK(doca_workq_submit(wq, &job.base));
		CHECK(wait_event(wq, &ev));
		ASSERT(ev.type == DOCA_DMA_JOB_MEMCPY && ev.user_data.u64 == 0xD3A);
		ASSERT((doca_error_t)ev.result.u64 == DOCA_SUCCESS);
		CHECK(doca_buf_get_data_len(dst, &len));
		ASSERT(len == 100 * 1024);
		CHECK(doca_buf_get_data(dst, &p));
		ASSERT(memcmp(p, mem, 100 * 1024) == 0);

		/* A list source: its data is appended after what is already there. */
		CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem + 200 * 1024, 1000, &src2));
		memset(mem + 200 * 1024, 0x5A, 1000);
		CHECK(doca_buf_list_chain(src, src2));
		job.base.user_data.u64 = 2;
		CHECK(doca_workq_submit(wq, &job.base));
		CHECK(wait_event(wq, &ev));
		ASSERT(ev.user_data.u64 == 2);
		CHECK(doca_buf_get_data_len(dst, &len));
		ASSERT(len == 2 * 100 * 1024 + 1000);
		ASSERT(mem[(512 << 10) + 2 * 100 * 1024] == 0x5A);
		/* Not enough tailroom now: the job fails, its event says why, nothing is written. */
		CHECK(doca_workq_submit(wq, &job.base));
		EXPECT_ERR(wait_event(wq, &ev), DOCA_ERROR_IO_FAILED);
		ASSERT((doca_error_t)ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_buf_get_data_len(dst, &len));
		ASSERT(len == 2 * 100 * 1024 + 1000);
		CHECK(doca_buf_refcount_rm(src, NULL)); /* releases the list */
		CHECK(doca_buf_refcount_rm(dst, NULL));
	}

	/* SHA-256 and SHA-1 of "abc". */
	memcpy(mem, "abc", 3);
	CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, 3, &req));
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 4096, 256, &resp));
	{
		struct doca_sha_job job = {
			.base = {.type = DOCA_SHA_JOB_SHA256, .ctx = doca_sha_as_ctx(sha), .user_data.u64 = 256},
			.req_buf = req,
			.resp_buf = resp,
			.flags = DOCA_SHA_JOB_FLAGS_NONE,
		};
		CHECK(doca_workq_submit(wq, &job.base));
		CHECK(wait_event(wq, &ev));
		ASSERT(ev.type == DOCA_SHA_JOB_SHA256 && ev.user_data.u64 == 256);
		CHECK(doca_buf_get_data(resp, &p));
		CHECK(doca_buf_get_data_len(resp, &len));
		ASSERT(len == DOCA_SHA256_BYTE_COUNT);
		ASSERT(memcmp(p, SHA256_ABC, 32) == 0);
		CHECK(doca_buf_reset_data_len(resp));
		job.base.type = DOCA_SHA_JOB_SHA1;
		CHECK(doca_workq_submit(wq, &job.base));
		CHECK(wait_event(wq, &ev));
		CHECK(doca_buf_get_data(resp, &p));
		ASSERT(memcmp(p, SHA1_ABC, 20) == 0);
		CHECK(doca_buf_refcount_rm(req, NULL));
		CHECK(doca_buf_reset_data_len(resp));
	}

	/* Partial SHA-256: 3 segments of 64, 64 and 3 bytes equal one-shot of the 131 bytes. */
	{
		struct doca_sha_partial_session *session;
		struct doca_buf *seg[3];
		uint8_t one_shot[32];
		size_t off[3] = {0, 64, 128}, sz[3] = {64, 64, 3};

		for (i = 0; i < 131; i++)
			mem[8192 + i] = (uint8_t)i;
		CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem + 8192, 131, &req));
		{
			struct doca_sha_job job = {
				.base = {.type = DOCA_SHA_JOB_SHA256, .ctx = doca_sha_as_ctx(sha)},
				.req_buf = req,
				.resp_buf = resp,
			};
			CHECK(doca_workq_submit(wq, &job.base));
			CHECK(wait_event(wq, &ev));
			CHECK(doca_buf_get_data(resp, &p));
			memcpy(one_shot, p, 32);
			CHECK(doca_buf_reset_data_len(resp));
			CHECK(doca_buf_refcount_rm(req, NULL));
		}
		CHECK(doca_sha_partial_session_create(sha, wq, &session));
		for (i = 0; i < 3; i++) {
			struct doca_sha_partial_job pj = {
				.sha_job = {
					.base = {.type = DOCA_SHA_JOB_SHA256_PARTIAL, .ctx = doca_sha_as_ctx(sha), .user_data.u64 = (uint64_t)i},
					.resp_buf = resp,
					.flags = i == 2 ? DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL : DOCA_SHA_JOB_FLAGS_NONE,
				},
				.session = session,
			};
			CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem + 8192 + off[i], sz[i], &seg[i]));
			pj.sha_job.req_buf = seg[i];
			CHECK(doca_workq_submit(wq, &pj.sha_job.base));
			CHECK(wait_event(wq, &ev));
			ASSERT(ev.user_data.u64 == (uint64_t)i);
		}
		CHECK(doca_buf_get_data(resp, &p));
		ASSERT(memcmp(p, one_shot, 32) == 0);
		for (i = 0; i < 3; i++)
			CHECK(doca_buf_refcount_rm(seg[i], NULL));
		CHECK(doca_sha_partial_session_destroy(sha, wq, session));
	}
	CHECK(doca_buf_refcount_rm(resp, NULL));

	CHECK(doca_ctx_workq_rm(doca_dma_as_ctx(dma), wq));
	CHECK(doca_ctx_workq_rm(doca_sha_as_ctx(sha), wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_stop(doca_sha_as_ctx(sha)));
	CHECK(doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev));
	CHECK(doca_ctx_dev_rm(doca_sha_as_ctx(sha), dev));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_sha_destroy(sha));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("dma_sha: ok\n");
	return 0;
}
