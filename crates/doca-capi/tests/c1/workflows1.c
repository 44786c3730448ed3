/*
 * The memory workflows of the 1.x Core guide (chapter 6), each ending in DMA copies
 * whose bytes are checked:
 *  - region-based access: one map populated with every known region up front, buffers
 *    taken by address in the data path;
 *  - random access with a single map: each new region populated as it comes, up to the
 *    map's chunk limit;
 *  - random access with a map per buffer: a map created, given its device and chunk
 *    limit, populated, used and destroyed for each set of regions.
 */
#include <stdint.h>

#include "../c/common.h"

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_mmap.h>

#define REGIONS 8
#define REGION_SIZE 4096

static struct doca_dev *dev;
static struct doca_ctx *ctx;
static struct doca_workq *wq;
static struct doca_buf_inventory *inv;

/* Copies src to dst (two regions of map) with one job, and checks the bytes. */
static void copy_and_check(struct doca_mmap *src_map, char *src, struct doca_mmap *dst_map, char *dst, size_t n)
{
	struct doca_buf *s, *d;
	struct doca_dma_job_memcpy job = {0};
	struct doca_event ev = {0};

	CHECK(doca_buf_inventory_buf_by_addr(inv, src_map, src, n, &s));
	CHECK(doca_buf_inventory_buf_by_addr(inv, dst_map, dst, n, &d));
	job.base.type = DOCA_DMA_JOB_MEMCPY;
	job.base.flags = DOCA_JOB_FLAGS_NONE;
	job.base.ctx = ctx;
	job.src_buff = s;
	job.dst_buff = d;
	job.num_bytes_to_copy = n;
	CHECK(doca_workq_submit(wq, &job.base));
	CHECK(wait_event(wq, &ev));
	ASSERT(memcmp(src, dst, n) == 0);
	CHECK(doca_buf_refcount_rm(s, NULL));
	CHECK(doca_buf_refcount_rm(d, NULL));
}

static void fill(char *p, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(seed * 31 + i * 7);
}

int main(void)
{
	struct doca_dma *dma;
	struct doca_mmap *map;
	char *mem[2 * REGIONS];
	uint32_t chunks, num_bufs;
	int i, round;

	dev = open_first_device();
	CHECK(doca_dma_create(&dma));
	ctx = doca_dma_as_ctx(dma);
	CHECK(doca_ctx_dev_add(ctx, dev));
	CHECK(doca_ctx_start(ctx));
	CHECK(doca_workq_create(16, &wq));
	CHECK(doca_ctx_workq_add(ctx, wq));
	CHECK(doca_buf_inventory_create("workflows", 4, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));
	for (i = 0; i < 2 * REGIONS; i++) {
		mem[i] = malloc(REGION_SIZE);
		ASSERT(mem[i] != NULL);
	}

	/* 6.2: every region known at start. */
	CHECK(doca_mmap_create("regions", &map));
	chunks = 2 * REGIONS;
	CHECK(doca_mmap_property_set(map, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&chunks, sizeof(chunks)));
	CHECK(doca_mmap_start(map));
	for (i = 0; i < 2 * REGIONS; i++)
		CHECK(doca_mmap_populate(map, mem[i], REGION_SIZE, 4096, NULL, NULL));
	CHECK(doca_mmap_dev_add(map, dev));
	for (round = 0; round < 3; round++) {
		for (i = 0; i < REGIONS; i++) {
			fill(mem[i], REGION_SIZE, round * REGIONS + i);
			copy_and_check(map, mem[i], map, mem[REGIONS + i], REGION_SIZE - (size_t)i);
		}
	}
	CHECK(doca_mmap_property_get(map, DOCA_MMAP_NUM_BUFS, (const uint8_t *)&num_bufs, sizeof(num_bufs)));
	ASSERT(num_bufs == 0);
	CHECK(doca_mmap_dev_rm(map, dev));
	CHECK(doca_mmap_stop(map));
	CHECK(doca_mmap_destroy(map));
	printf("workflows1: region-based access: %d copies\n", 3 * REGIONS);

	/* 6.3.1: one map, each region populated when it comes. */
	CHECK(doca_mmap_create("random", &map));
	CHECK(doca_mmap_property_set(map, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&chunks, sizeof(chunks)));
	CHECK(doca_mmap_start(map));
	CHECK(doca_mmap_dev_add(map, dev));
	for (i = 0; i < REGIONS; i++) {
		CHECK(doca_mmap_populate(map, mem[i], REGION_SIZE, 4096, NULL, NULL));
		CHECK(doca_mmap_populate(map, mem[REGIONS + i], REGION_SIZE, 4096, NULL, NULL));
		fill(mem[i], REGION_SIZE, 100 + i);
		copy_and_check(map, mem[i], map, mem[REGIONS + i], REGION_SIZE);
	}
	/* The map is full: the next region is refused. */
	EXPECT_ERR(doca_mmap_populate(map, (char *)&round, sizeof(round), 4096, NULL, NULL), DOCA_ERROR_NO_MEMORY);
	CHECK(doca_mmap_dev_rm(map, dev));
	CHECK(doca_mmap_stop(map));
	CHECK(doca_mmap_destroy(map));
	printf("workflows1: random access, single map: %d copies\n", REGIONS);

	/* 6.3.2: a map per set of regions. */
	for (i = 0; i < REGIONS; i++) {
		chunks = 2;
		CHECK(doca_mmap_create("per-buffer", &map));
		CHECK(doca_mmap_dev_add(map, dev));
		CHECK(doca_mmap_property_set(map, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&chunks, sizeof(chunks)));
		CHECK(doca_mmap_start(map));
		CHECK(doca_mmap_populate(map, mem[i], REGION_SIZE, 4096, NULL, NULL));
		CHECK(doca_mmap_populate(map, mem[REGIONS + i], REGION_SIZE, 4096, NULL, NULL));
		fill(mem[i], REGION_SIZE, 200 + i);
		copy_and_check(map, mem[i], map, mem[REGIONS + i], REGION_SIZE);
		CHECK(doca_mmap_dev_rm(map, dev));
		CHECK(doca_mmap_destroy(map));
	}
	printf("workflows1: random access, map per buffer: %d copies\n", REGIONS);

	/* 5.4: the map stops at any point, with a buffer still taken: no new buffer, range
	 * or export until it starts again; the buffer taken stays. A map is exported once. */
	{
		struct doca_buf *kept = NULL, *more = NULL;
		uint8_t *desc = NULL, *again = NULL;
		size_t desc_len = 0, again_len = 0;

		chunks = 1;
		CHECK(doca_mmap_create("life", &map));
		CHECK(doca_mmap_property_set(map, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&chunks, sizeof(chunks)));
		CHECK(doca_mmap_start(map));
		CHECK(doca_mmap_dev_add(map, dev));
		CHECK(doca_mmap_populate(map, mem[0], REGION_SIZE, 4096, NULL, NULL));
		CHECK(doca_buf_inventory_buf_by_addr(inv, map, mem[0], REGION_SIZE, &kept));
		CHECK(doca_mmap_stop(map));
		EXPECT_ERR(doca_buf_inventory_buf_by_addr(inv, map, mem[0], 64, &more), DOCA_ERROR_BAD_STATE);
		EXPECT_ERR(doca_mmap_populate(map, mem[1], REGION_SIZE, 4096, NULL, NULL), DOCA_ERROR_BAD_STATE);
		EXPECT_ERR(doca_mmap_export(map, dev, &desc, &desc_len), DOCA_ERROR_BAD_STATE);
		CHECK(doca_mmap_start(map));
		fill(mem[0], REGION_SIZE / 2, 77);
		copy_and_check(map, mem[0], map, mem[0] + REGION_SIZE / 2, REGION_SIZE / 2);
		CHECK(doca_mmap_export(map, dev, &desc, &desc_len));
		EXPECT_ERR(doca_mmap_export(map, dev, &again, &again_len), DOCA_ERROR_NOT_PERMITTED);
		free(desc);
		EXPECT_ERR(doca_mmap_destroy(map), DOCA_ERROR_IN_USE);
		CHECK(doca_buf_refcount_rm(kept, NULL));
		/* An exported map keeps its devices. */
		EXPECT_ERR(doca_mmap_dev_rm(map, dev), DOCA_ERROR_NOT_PERMITTED);
		CHECK(doca_mmap_stop(map));
		CHECK(doca_mmap_destroy(map));
		printf("workflows1: stopped with a buffer taken, started again, exported once\n");
	}

	for (i = 0; i < 2 * REGIONS; i++)
		free(mem[i]);
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_ctx_workq_rm(ctx, wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(ctx));
	CHECK(doca_ctx_dev_rm(ctx, dev));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_dev_close(dev));
	printf("workflows1: done\n");
	return 0;
}
