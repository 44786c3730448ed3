/* A job keeps its buffers alive until it completes: the program releases its only
 * references to a source used by two jobs in flight, and to one destination, right
 * after submitting; both jobs still copy every byte (on engine threads the buffers
 * were freed under the engine: a crash). Releasing more references than the program
 * holds cannot take the jobs' (IN_USE). A released buffer cannot be taken back. A list
 * element used by a job in flight: its own last reference stays the list's
 * (NOT_PERMITTED), and releasing the list's head leaves it to the job until the job
 * completes. */
#include "common.h"

#include <doca_buf_inventory.h>
#include <doca_dma.h>

#define N (16u << 20)

int main(void)
{
	struct doca_dev *dev = open_first_device();
	struct doca_dma *dma;
	struct doca_workq *wq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst1, *dst2;
	struct doca_event ev = {0};
	uint8_t *mem = malloc(3 * (size_t)N);
	uint16_t rc = 0;
	uint32_t free_elems = 0;
	size_t i, round;

	ASSERT(mem != NULL);
	CHECK(doca_dma_create(&dma));
	CHECK(doca_ctx_dev_add(doca_dma_as_ctx(dma), dev));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_workq_create(8, &wq));
	CHECK(doca_ctx_workq_add(doca_dma_as_ctx(dma), wq));
	CHECK(doca_mmap_create(NULL, &mmap));
	CHECK(doca_mmap_set_memrange(mmap, mem, 3 * (size_t)N));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_create(NULL, 8, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));

	for (round = 0; round < 4; round++) {
		struct doca_dma_job_memcpy j1 = {.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(dma)}};
		struct doca_dma_job_memcpy j2 = j1;
		int done;

		for (i = 0; i < N; i++)
			mem[i] = (uint8_t)(i * 7 + round);
		memset(mem + N, 0, 2 * (size_t)N);
		CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, N, &src));
		CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + N, N, &dst1));
		CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 2 * (size_t)N, N, &dst2));
		j1.src_buff = src;
		j1.dst_buff = dst1;
		j1.base.user_data.u64 = 1;
		j2.src_buff = src;
		j2.dst_buff = dst2;
		j2.base.user_data.u64 = 2;
		CHECK(doca_workq_submit(wq, &j1.base));
		CHECK(doca_workq_submit(wq, &j2.base));
		/* The program's only references, released while the jobs may be running; the
		 * jobs' own references cannot be released for them. */
		CHECK(doca_buf_refcount_rm(src, NULL));
		EXPECT_ERR(doca_buf_refcount_rm(src, NULL), DOCA_ERROR_IN_USE);
		CHECK(doca_buf_refcount_rm(dst2, NULL));
		for (done = 0; done < 2; done++) {
			CHECK(wait_event(wq, &ev));
			ASSERT((doca_error_t)ev.result.u64 == DOCA_SUCCESS);
		}
		ASSERT(memcmp(mem, mem + N, N) == 0);
		ASSERT(memcmp(mem, mem + 2 * (size_t)N, N) == 0);
		/* Only dst1 is still held: by the program. */
		CHECK(doca_buf_get_refcount(dst1, &rc));
		ASSERT(rc == 1);
		CHECK(doca_buf_inventory_get_num_free_elements(inv, &free_elems));
		ASSERT(free_elems == 7);
		CHECK(doca_buf_refcount_rm(dst1, NULL));
		/* A buffer returned to its inventory is not brought back. */
		EXPECT_ERR(doca_buf_refcount_add(dst1, &rc), DOCA_ERROR_BAD_STATE);
	}

	{
		struct doca_dma_job_memcpy j = {.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(dma)}};
		struct doca_buf *head, *elem;

		for (i = 0; i < 2 * (size_t)N; i++)
			mem[i] = (uint8_t)(i * 13);
		memset(mem + 2 * (size_t)N, 0, N);
		CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, N, &head));
		CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem + N, N, &elem));
		CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 2 * (size_t)N, N, &dst1));
		CHECK(doca_buf_list_chain(head, elem));
		j.src_buff = elem;
		j.dst_buff = dst1;
		CHECK(doca_workq_submit(wq, &j.base));
		EXPECT_ERR(doca_buf_refcount_rm(elem, NULL), DOCA_ERROR_NOT_PERMITTED);
		CHECK(doca_buf_refcount_rm(head, NULL));
		CHECK(wait_event(wq, &ev));
		ASSERT((doca_error_t)ev.result.u64 == DOCA_SUCCESS);
		ASSERT(memcmp(mem + N, mem + 2 * (size_t)N, N) == 0);
		/* The element went with its job's completion: only dst1 is held. */
		CHECK(doca_buf_inventory_get_num_free_elements(inv, &free_elems));
		ASSERT(free_elems == 7);
		CHECK(doca_buf_refcount_rm(dst1, NULL));
	}

	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_stop(mmap));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_ctx_workq_rm(doca_dma_as_ctx(dma), wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("inflight_release: ok\n");
	return 0;
}
