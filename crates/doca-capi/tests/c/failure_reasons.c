/* A failed job says why: with -l 60 (debug), the library logs the reason of each job
 * that fails (and of each refused call) when the program learns of it; the event still
 * carries the DOCA error code. The Rust test checks the log lines. */
#include "common.h"

#include <doca_argp.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_erasure_coding.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(FAILURE_REASONS);

int main(int argc, char **argv)
{
	struct doca_dev *dev;
	struct doca_dma *dma;
	struct doca_ec *ec;
	struct doca_matrix *matrix;
	struct doca_workq *wq;
	struct doca_mmap *rw, *ro;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_event ev = {0};
	doca_error_t r;
	static uint8_t mem_rw[1 << 16], mem_ro[4096];
	int dummy = 0;

	CHECK(doca_log_create_standard_backend());
	CHECK(doca_argp_init("failure_reasons", &dummy));
	CHECK(doca_argp_start(argc, argv));
	dev = open_first_device();
	CHECK(doca_dma_create(&dma));
	CHECK(doca_ctx_dev_add(doca_dma_as_ctx(dma), dev));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_ec_create(&ec));
	CHECK(doca_ctx_dev_add(doca_ec_as_ctx(ec), dev));
	CHECK(doca_ctx_start(doca_ec_as_ctx(ec)));
	CHECK(doca_workq_create(8, &wq));
	CHECK(doca_ctx_workq_add(doca_dma_as_ctx(dma), wq));
	CHECK(doca_ctx_workq_add(doca_ec_as_ctx(ec), wq));

	/* The default permission (local read-write), and an explicit read-only map. */
	CHECK(doca_mmap_create(NULL, &rw));
	CHECK(doca_mmap_set_memrange(rw, mem_rw, sizeof(mem_rw)));
	CHECK(doca_mmap_dev_add(rw, dev));
	CHECK(doca_mmap_start(rw));
	CHECK(doca_mmap_create(NULL, &ro));
	CHECK(doca_mmap_set_memrange(ro, mem_ro, sizeof(mem_ro)));
	CHECK(doca_mmap_set_permissions(ro, DOCA_ACCESS_LOCAL_READ_ONLY));
	CHECK(doca_mmap_dev_add(ro, dev));
	CHECK(doca_mmap_start(ro));
	CHECK(doca_buf_inventory_create(NULL, 8, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));

	/* DMA into the read-only map. */
	memset(mem_rw, 0x11, 64);
	CHECK(doca_buf_inventory_buf_by_data(inv, rw, mem_rw, 64, &src));
	CHECK(doca_buf_inventory_buf_by_addr(inv, ro, mem_ro, 64, &dst));
	{
		struct doca_dma_job_memcpy job = {
			.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(dma), .user_data.u64 = 7},
			.dst_buff = dst,
			.src_buff = src,
		};
		CHECK(doca_workq_submit(wq, &job.base));
		EXPECT_ERR(wait_event(wq, &ev), DOCA_ERROR_IO_FAILED);
		ASSERT(ev.user_data.u64 == 7);
		ASSERT((doca_error_t)ev.result.u64 == DOCA_ERROR_NOT_PERMITTED);
	}
	CHECK(doca_buf_refcount_rm(src, NULL));
	CHECK(doca_buf_refcount_rm(dst, NULL));

	/* EC create over 2 blocks of 100 bytes: not a multiple of 64. */
	CHECK(doca_ec_matrix_create(ec, DOCA_CODING_MATRIX_CAUCHY, 2, 1, &matrix));
	CHECK(doca_buf_inventory_buf_by_data(inv, rw, mem_rw, 200, &src));
	CHECK(doca_buf_inventory_buf_by_addr(inv, rw, mem_rw + 4096, 4096, &dst));
	{
		struct doca_ec_job_create job = {
			.base = {.type = DOCA_EC_JOB_CREATE, .ctx = doca_ec_as_ctx(ec), .user_data.u64 = 8},
			.create_matrix = matrix,
			.src_original_data_buff = src,
			.dst_rdnc_buff = dst,
		};
		r = doca_workq_submit(wq, &job.base);
		if (r == DOCA_SUCCESS) {
			EXPECT_ERR(wait_event(wq, &ev), DOCA_ERROR_IO_FAILED);
			ASSERT(ev.user_data.u64 == 8);
			ASSERT((doca_error_t)ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
		} else {
			ASSERT(r == DOCA_ERROR_INVALID_VALUE);
		}
	}
	CHECK(doca_buf_refcount_rm(src, NULL));
	CHECK(doca_buf_refcount_rm(dst, NULL));
	CHECK(doca_ec_matrix_destroy(matrix));

	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_stop(ro));
	CHECK(doca_mmap_destroy(ro));
	CHECK(doca_mmap_stop(rw));
	CHECK(doca_mmap_destroy(rw));
	CHECK(doca_ctx_workq_rm(doca_ec_as_ctx(ec), wq));
	CHECK(doca_ctx_workq_rm(doca_dma_as_ctx(dma), wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(doca_ec_as_ctx(ec)));
	CHECK(doca_ctx_dev_rm(doca_ec_as_ctx(ec), dev));
	CHECK(doca_ec_destroy(ec));
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_dev_close(dev));
	CHECK(doca_argp_destroy());
	printf("failure_reasons: ok\n");
	return 0;
}
