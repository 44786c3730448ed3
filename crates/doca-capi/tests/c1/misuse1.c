/*
 * The 1.x calls used wrongly: every row answers its documented error and changes
 * nothing, and what is right afterwards still works. Prints one line per row.
 */
#include <inttypes.h>
#include <stdint.h>

#include "../c/common.h"

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_mmap.h>

static int rows;

#define ROW(expr, code)                                   \
	do {                                              \
		EXPECT_ERR(expr, code);                   \
		printf("misuse1: %-72.72s %s\n", #expr, doca_get_error_name(code)); \
		rows++;                                   \
	} while (0)

int main(void)
{
	static char memory[4 * 8192];
	struct doca_devinfo **list, *info;
	struct doca_dev *dev, *dev2;
	struct doca_mmap *mmap, *one;
	struct doca_buf_inventory *inv;
	struct doca_buf *buf, *b2, *b3;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	struct doca_event ev = {0};
	struct doca_dma_job_memcpy job = {0};
	struct doca_pci_bdf bdf;
	uint32_t n = 0, u32 = 0, depth = 8;
	uint8_t small[8], ipv4[4], flag = 7, *head;
	char vuid[128];
	uint8_t *desc = NULL;
	size_t desc_len = 0;

	/* Devices: the 1.4 form of the list, properties of the wrong size or kind. */
	CHECK(doca_devinfo_list_create(&list, &n));
	ASSERT(n > 0 && list[n] == NULL);
	ROW(doca_devinfo_property_get(list[0], DOCA_DEVINFO_PROPERTY_PCI_ADDR, (uint8_t *)&bdf, 4),
	    DOCA_ERROR_INVALID_VALUE);
	ROW(doca_devinfo_property_get(list[0], DOCA_DEVINFO_PROPERTY_VUID, small, sizeof(small)),
	    DOCA_ERROR_INVALID_VALUE);
	ROW(doca_devinfo_property_get(list[0], (enum doca_devinfo_property)99, ipv4, sizeof(ipv4)),
	    DOCA_ERROR_INVALID_VALUE);
	ROW(doca_devinfo_property_get(list[0], DOCA_DEVINFO_PROPERTY_IPV4_ADDR, NULL, 4), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_devinfo_property_get(list[0], DOCA_DEVINFO_PROPERTY_VUID, (uint8_t *)vuid, sizeof(vuid)));
	ASSERT(strlen(vuid) > 0);
	CHECK(doca_devinfo_property_get(list[0], DOCA_DEVINFO_PROPERTY_IPV4_ADDR, ipv4, sizeof(ipv4)));
	CHECK(doca_dev_open(list[0], &dev));
	/* A device already open is the same device; it closes with its last close. */
	CHECK(doca_dev_open(list[0], &dev2));
	ASSERT(dev2 == dev);
	CHECK(doca_dev_close(dev2));
	CHECK(doca_devinfo_list_destroy(list));
	CHECK(doca_dev_as_devinfo(dev, &info));
	CHECK(doca_devinfo_property_get(info, DOCA_DEVINFO_PROPERTY_PCI_ADDR, (uint8_t *)&bdf, sizeof(bdf)));
	ROW(doca_dev_as_devinfo(dev, NULL), DOCA_ERROR_INVALID_VALUE);
	/* A host device reaches no remote devices. */
	ROW(doca_devinfo_remote_list_create(dev, DOCA_DEV_REMOTE_FILTER_ALL, (struct doca_devinfo_remote ***)&list, &n),
	    DOCA_ERROR_NOT_SUPPORTED);
	ROW(doca_devinfo_remote_list_create(dev, (enum doca_dev_remote_filter)9, (struct doca_devinfo_remote ***)&list,
					    &n),
	    DOCA_ERROR_INVALID_VALUE);

	/* Memory maps: properties before start only, of their own size, some read-only. */
	CHECK(doca_mmap_create("misuse", &mmap));
	ROW(doca_mmap_property_set(mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&u32, 2), DOCA_ERROR_INVALID_VALUE);
	ROW(doca_mmap_property_set(mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&u32, sizeof(u32)),
	    DOCA_ERROR_INVALID_VALUE);
	ROW(doca_mmap_property_set(mmap, DOCA_MMAP_NUM_BUFS, (const uint8_t *)&u32, sizeof(u32)),
	    DOCA_ERROR_NOT_PERMITTED);
	ROW(doca_mmap_property_set(mmap, DOCA_MMAP_EXPORTED, &flag, 1), DOCA_ERROR_NOT_PERMITTED);
	ROW(doca_mmap_property_set(mmap, (enum doca_mmap_property)42, (const uint8_t *)&u32, sizeof(u32)),
	    DOCA_ERROR_INVALID_VALUE);
	u32 = 0x1000;
	ROW(doca_mmap_property_set(mmap, DOCA_MMAP_ACCESS_FLAGS, (const uint8_t *)&u32, sizeof(u32)),
	    DOCA_ERROR_INVALID_VALUE);
	ROW(doca_mmap_populate(mmap, memory, 4096, 4096, NULL, NULL), DOCA_ERROR_BAD_STATE);
	u32 = 3;
	CHECK(doca_mmap_property_set(mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&u32, sizeof(u32)));
	CHECK(doca_mmap_start(mmap));
	ROW(doca_mmap_property_set(mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&u32, sizeof(u32)),
	    DOCA_ERROR_BAD_STATE);
	ROW(doca_mmap_property_get(mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)small, 8), DOCA_ERROR_INVALID_VALUE);
	ROW(doca_mmap_property_get(mmap, DOCA_MMAP_NAME, (const uint8_t *)small, 4), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_mmap_property_get(mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&u32, sizeof(u32)));
	ASSERT(u32 == 3);

	/* Chunks: page size, overlap, the limit; buffers inside one chunk only. */
	ROW(doca_mmap_populate(mmap, memory, 8192, 1000, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	ROW(doca_mmap_populate(mmap, NULL, 8192, 4096, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	ROW(doca_mmap_populate(mmap, memory, 0, 4096, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_mmap_populate(mmap, memory, 8192, 4096, NULL, NULL));
	ROW(doca_mmap_populate(mmap, memory + 4096, 8192, 4096, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	CHECK(doca_mmap_populate(mmap, memory + 16384, 4096, 4096, NULL, NULL));
	CHECK(doca_mmap_populate(mmap, memory + 24576, 4096, 4096, NULL, NULL));
	ROW(doca_mmap_populate(mmap, memory + 12288, 4096, 4096, NULL, NULL), DOCA_ERROR_NO_MEMORY);
	CHECK(doca_mmap_dev_add(mmap, dev));
	ROW(doca_mmap_dev_add(mmap, dev), DOCA_ERROR_ALREADY_EXIST);
	CHECK(doca_buf_inventory_create("misuse", 4, DOCA_BUF_EXTENSION_NONE, &inv));
	ROW(doca_buf_inventory_buf_by_addr(inv, mmap, memory, 64, &buf), DOCA_ERROR_BAD_STATE);
	ROW(doca_buf_inventory_property_set(inv, DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS, (const uint8_t *)&u32,
					    sizeof(u32)),
	    DOCA_ERROR_NOT_PERMITTED);
	CHECK(doca_buf_inventory_start(inv));
	ROW(doca_buf_inventory_buf_by_addr(inv, mmap, memory + 8000, 512, &buf), DOCA_ERROR_INVALID_VALUE);
	ROW(doca_buf_inventory_buf_by_addr(inv, mmap, memory + 12288, 64, &buf), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, memory, 4096, &buf));
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, memory + 16384, 4096, &b2));
	/* A duplicate describes the same region. */
	CHECK(doca_buf_inventory_buf_dup(inv, buf, &b3));
	CHECK(doca_buf_head_get(b3, &head));
	ASSERT(head == (uint8_t *)memory);
	CHECK(doca_buf_refcount_rm(b3, NULL));
	CHECK(doca_buf_inventory_property_get(inv, DOCA_BUF_INVENTORY_PROPERTY_NUM_FREE_ELEMENTS, (const uint8_t *)&u32,
					      sizeof(u32)));
	ASSERT(u32 == 2);
	/* Three chunks cannot be exported; a map with buffers cannot be destroyed. It can
	 * be stopped (the 1.x guide: at any point): no new buffer until it starts again. */
	ROW(doca_mmap_export(mmap, dev, &desc, &desc_len), DOCA_ERROR_NOT_SUPPORTED);
	ROW(doca_mmap_destroy(mmap), DOCA_ERROR_IN_USE);
	CHECK(doca_mmap_stop(mmap));
	ROW(doca_buf_inventory_buf_by_addr(inv, mmap, memory + 8192, 64, &b3), DOCA_ERROR_BAD_STATE);
	ROW(doca_mmap_stop(mmap), DOCA_ERROR_BAD_STATE);
	CHECK(doca_mmap_start(mmap));

	/* Jobs: num_bytes_to_copy past a buffer fails the job; 0 is refused. */
	CHECK(doca_dma_create(&dma));
	ctx = doca_dma_as_ctx(dma);
	CHECK(doca_ctx_dev_add(ctx, dev));
	CHECK(doca_ctx_start(ctx));
	CHECK(doca_workq_create(4, &wq));
	CHECK(doca_workq_property_set(wq, DOCA_WORKQ_PROPERTY_DEPTH, (const uint8_t *)&depth, sizeof(depth)));
	CHECK(doca_ctx_workq_add(ctx, wq));
	ROW(doca_workq_property_set(wq, DOCA_WORKQ_PROPERTY_DEPTH, (const uint8_t *)&depth, sizeof(depth)),
	    DOCA_ERROR_NOT_PERMITTED);
	/* The life cycle of chapter 5: work queues go before stop, stop before destroy. */
	ROW(doca_ctx_stop(ctx), DOCA_ERROR_IN_USE);
	ROW(doca_workq_destroy(wq), DOCA_ERROR_IN_USE);
	ROW(doca_dma_destroy(dma), DOCA_ERROR_IN_USE);
	ROW(doca_workq_property_get(wq, DOCA_WORKQ_PROPERTY_DEPTH, small, 8), DOCA_ERROR_INVALID_VALUE);
	job.base.type = DOCA_DMA_JOB_MEMCPY;
	job.base.ctx = ctx;
	job.src_buff = buf;
	job.dst_buff = b2;
	job.num_bytes_to_copy = 0;
	ROW(doca_workq_submit(wq, &job.base), DOCA_ERROR_INVALID_VALUE);
	job.num_bytes_to_copy = 4097;
	CHECK(doca_workq_submit(wq, &job.base));
	ROW(wait_event(wq, &ev), DOCA_ERROR_IO_FAILED);
	ASSERT(ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
	/* A right job still runs. */
	memset(memory, 0x5a, 4096);
	job.num_bytes_to_copy = 4096;
	CHECK(doca_workq_submit(wq, &job.base));
	CHECK(wait_event(wq, &ev));
	ASSERT(memory[16384] == 0x5a && memory[16384 + 4095] == 0x5a);

	CHECK(doca_ctx_workq_rm(ctx, wq));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_ctx_stop(ctx));
	CHECK(doca_ctx_dev_rm(ctx, dev));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_buf_refcount_rm(buf, NULL));
	CHECK(doca_buf_refcount_rm(b2, NULL));
	/* A stopped inventory gives no buffer until it is started again. */
	CHECK(doca_buf_inventory_stop(inv));
	ROW(doca_buf_inventory_buf_by_addr(inv, mmap, memory, 64, &buf), DOCA_ERROR_BAD_STATE);
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, memory, 64, &buf));
	CHECK(doca_buf_refcount_rm(buf, NULL));
	CHECK(doca_buf_inventory_stop(inv));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_dev_rm(mmap, dev));
	CHECK(doca_mmap_stop(mmap));
	CHECK(doca_mmap_destroy(mmap));

	/* Properties are read-only from the first start on, also once stopped. */
	CHECK(doca_mmap_create("stopped", &one));
	CHECK(doca_mmap_start(one));
	CHECK(doca_mmap_stop(one));
	ROW(doca_mmap_property_set(one, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&u32, sizeof(u32)),
	    DOCA_ERROR_BAD_STATE);
	CHECK(doca_mmap_destroy(one));

	/* A single chunk exports; the exported map takes no more chunks or devices. */
	CHECK(doca_mmap_create(NULL, &one));
	CHECK(doca_mmap_start(one));
	ROW(doca_mmap_export(one, dev, &desc, &desc_len), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_mmap_dev_add(one, dev));
	ROW(doca_mmap_export(one, dev, &desc, &desc_len), DOCA_ERROR_BAD_STATE);
	CHECK(doca_mmap_populate(one, memory, 4096, 4096, NULL, NULL));
	CHECK(doca_mmap_export(one, dev, &desc, &desc_len));
	ASSERT(desc != NULL && desc_len > 0);
	free(desc);
	CHECK(doca_mmap_property_get(one, DOCA_MMAP_EXPORTED, &flag, 1));
	ASSERT(flag == 1);
	ROW(doca_mmap_populate(one, memory + 8192, 4096, 4096, NULL, NULL), DOCA_ERROR_NOT_PERMITTED);
	ROW(doca_mmap_dev_rm(one, dev), DOCA_ERROR_NOT_PERMITTED);
	ROW(doca_mmap_property_set(one, DOCA_MMAP_MAX_NUM_DEVICES, (const uint8_t *)&u32, sizeof(u32)),
	    DOCA_ERROR_NOT_PERMITTED);
	CHECK(doca_mmap_stop(one));
	CHECK(doca_mmap_destroy(one));
	CHECK(doca_dev_close(dev));
	printf("misuse1: %d rows\n", rows);
	return 0;
}
