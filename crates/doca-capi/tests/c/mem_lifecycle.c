/* Memory maps, inventories, buffers, lists, pools and buffer arrays: their life cycles
 * and the refusals that protect them. */
#include "common.h"
#include <doca_buf.h>
#include <doca_buf_array.h>
#include <doca_buf_inventory.h>
#include <doca_bufpool.h>
#include <doca_mmap.h>

static int freed;

static void free_cb(void *addr, size_t len, void *cookie)
{
	ASSERT(cookie == (void *)&freed);
	ASSERT(len == 4096);
	free(addr);
	freed++;
}

int main(void)
{
	struct doca_dev *dev = open_first_device();
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_buf *a, *b, *c, *it;
	union doca_data ud = {.u64 = 42}, got;
	char *mem = malloc(4096);
	void *p;
	size_t len;
	uint32_t n;
	uint16_t rc;
	bool flag;
	uint8_t in_list;

	ASSERT(mem != NULL);
	CHECK(doca_mmap_create(&ud, &mmap));
	CHECK(doca_mmap_get_user_data(mmap, &got));
	ASSERT(got.u64 == 42);
	/* No memory range yet: start is refused. */
	ASSERT(doca_mmap_start(mmap) != DOCA_SUCCESS);
	CHECK(doca_mmap_set_memrange(mmap, mem, 4096));
	CHECK(doca_mmap_set_free_cb(mmap, free_cb, &freed));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	EXPECT_ERR(doca_mmap_set_memrange(mmap, mem, 1024), DOCA_ERROR_BAD_STATE);
	CHECK(doca_mmap_get_memrange(mmap, &p, &len));
	ASSERT(p == mem && len == 4096);

	CHECK(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_buf_inventory_get_num_elements(inv, &n));
	ASSERT(n == 4);

	/* by_addr: empty data at head; by_data: all data. */
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem, 1024, &a));
	CHECK(doca_buf_get_data_len(a, &len));
	ASSERT(len == 0);
	CHECK(doca_buf_get_data(a, &p));
	ASSERT(p == mem);
	CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem + 1024, 512, &b));
	CHECK(doca_buf_get_data_len(b, &len));
	ASSERT(len == 512);
	CHECK(doca_buf_get_len(b, &len));
	ASSERT(len == 512);
	CHECK(doca_buf_get_head(b, &p));
	ASSERT(p == mem + 1024);
	/* Outside the map: refused. */
	EXPECT_ERR(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 4000, 1024, &c), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_buf_set_data(a, mem + 16, 100));
	CHECK(doca_buf_get_data_len(a, &len));
	ASSERT(len == 100);
	/* DOCA's set_data always succeeds, even past the buffer (a task checks the mmap). */
	CHECK(doca_buf_set_data(a, mem + 1000, 100));
	CHECK(doca_buf_get_data_len(a, &len));
	ASSERT(len == 100);
	CHECK(doca_buf_reset_data_len(a));
	CHECK(doca_buf_get_data_len(a, &len));
	ASSERT(len == 0);

	/* Reference counts: the count before the call is reported. */
	CHECK(doca_buf_get_refcount(a, &rc));
	ASSERT(rc == 1);
	CHECK(doca_buf_refcount_add(a, &rc));
	ASSERT(rc == 1);
	CHECK(doca_buf_refcount_rm(a, &rc));
	ASSERT(rc == 2);

	/* Lists. */
	CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem + 2048, 256, &c));
	CHECK(doca_buf_list_chain(b, c));
	CHECK(doca_buf_list_num_elements(b, &n));
	ASSERT(n == 2);
	CHECK(doca_buf_list_is_first(b, &flag));
	ASSERT(flag);
	CHECK(doca_buf_list_is_last(c, &flag));
	ASSERT(flag);
	CHECK(doca_buf_is_in_list(c, &in_list));
	ASSERT(in_list == 1);
	CHECK(doca_buf_list_next(b, &it));
	ASSERT(it == c);
	CHECK(doca_buf_list_next(c, &it));
	ASSERT(it == NULL);
	CHECK(doca_buf_list_last(b, &it));
	ASSERT(it == c);
	CHECK(doca_buf_inventory_get_num_free_elements(inv, &n));
	ASSERT(n == 1);
	/* In use: the inventory and map refuse to go. */
	EXPECT_ERR(doca_buf_inventory_destroy(inv), DOCA_ERROR_IN_USE);
	EXPECT_ERR(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE);
	CHECK(doca_mmap_get_num_bufs(mmap, &n));
	ASSERT(n == 3);
	CHECK(doca_buf_list_unchain(b, c));
	CHECK(doca_buf_list_num_elements(b, &n));
	ASSERT(n == 1);

	/* dup copies the window. */
	{
		struct doca_buf *d;

		CHECK(doca_buf_inventory_buf_dup(inv, b, &d));
		CHECK(doca_buf_get_data(d, &p));
		ASSERT(p == mem + 1024);
		CHECK(doca_buf_refcount_rm(d, NULL));
	}
	CHECK(doca_buf_refcount_rm(a, NULL));
	CHECK(doca_buf_refcount_rm(b, NULL));
	CHECK(doca_buf_refcount_rm(c, NULL));
	CHECK(doca_buf_inventory_get_num_free_elements(inv, &n));
	ASSERT(n == 4);

	/* A pool of 8 x 256 B over the same map. */
	{
		struct doca_bufpool *pool;
		struct doca_buf *bufs[8], *extra;
		int i;

		CHECK(doca_bufpool_create(NULL, 8, DOCA_BUF_EXTENSION_NONE, 256, 64, mmap, &pool));
		CHECK(doca_bufpool_start(pool));
		for (i = 0; i < 8; i++)
			CHECK(doca_bufpool_buf_alloc(pool, &bufs[i]));
		EXPECT_ERR(doca_bufpool_buf_alloc(pool, &extra), DOCA_ERROR_NO_MEMORY);
		CHECK(doca_bufpool_get_num_free_elements(pool, &n));
		ASSERT(n == 0);
		EXPECT_ERR(doca_bufpool_destroy(pool), DOCA_ERROR_IN_USE);
		for (i = 0; i < 8; i++)
			CHECK(doca_buf_refcount_rm(bufs[i], NULL));
		CHECK(doca_bufpool_stop(pool));
		CHECK(doca_bufpool_destroy(pool));
	}

	/* A buffer array (no GPU here). */
	{
		struct doca_buf_arr *arr;
		struct doca_gpu_buf_arr *g;

		CHECK(doca_buf_arr_create(mmap, &arr));
		CHECK(doca_buf_arr_set_params(arr, 512, 8, 0));
		EXPECT_ERR(doca_buf_arr_set_target_gpu(arr, NULL), DOCA_ERROR_NOT_SUPPORTED);
		CHECK(doca_buf_arr_start(arr));
		EXPECT_ERR(doca_buf_arr_get_gpu_handle(arr, &g), DOCA_ERROR_NOT_SUPPORTED);
		CHECK(doca_buf_arr_stop(arr));
		CHECK(doca_buf_arr_destroy(arr));
	}

	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_stop(mmap));
	CHECK(doca_mmap_dev_rm(mmap, dev));
	ASSERT(freed == 0);
	CHECK(doca_mmap_destroy(mmap));
	ASSERT(freed == 1); /* the free callback released the range */
	CHECK(doca_dev_close(dev));
	printf("mem_lifecycle: ok\n");
	return 0;
}
