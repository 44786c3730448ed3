/* Helpers shared by the C tests of the 3.x (progress engine and tasks) interface. */
#ifndef DOCA_CAPI_TEST_COMMON3_H_
#define DOCA_CAPI_TEST_COMMON3_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#define CHECK(expr) \
	do { \
		doca_error_t r_ = (expr); \
		if (r_ != DOCA_SUCCESS) { \
			fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #expr, \
				doca_error_get_name(r_), doca_error_get_descr(r_)); \
			exit(1); \
		} \
	} while (0)

#define EXPECT_ERR(expr, code) \
	do { \
		doca_error_t r_ = (expr); \
		if (r_ != (code)) { \
			fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #expr, \
				doca_error_get_name(r_), doca_error_get_name(code)); \
			exit(1); \
		} \
	} while (0)

#define ASSERT(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1); \
		} \
	} while (0)

/* Opens the first device that runs DMA memcpy tasks, as DOCA's samples look for one. */
static inline struct doca_dev *open_dma_device(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0, i;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (i = 0; i < n && dev == NULL; i++)
		if (doca_dma_cap_task_memcpy_is_supported(list[i]) == DOCA_SUCCESS)
			CHECK(doca_dev_open(list[i], &dev));
	CHECK(doca_devinfo_destroy_list(list));
	ASSERT(dev != NULL);
	return dev;
}

/* Opens the device at `pci` ("bus:dev.fn"), as DOCA's samples open theirs. */
static inline struct doca_dev *open_dev_at(const char *pci)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0, i;
	uint8_t is_addr;

	CHECK(doca_devinfo_create_list(&list, &n));
	for (i = 0; i < n && dev == NULL; i++) {
		CHECK(doca_devinfo_is_equal_pci_addr(list[i], pci, &is_addr));
		if (is_addr)
			CHECK(doca_dev_open(list[i], &dev));
	}
	CHECK(doca_devinfo_destroy_list(list));
	ASSERT(dev != NULL);
	return dev;
}

/* Memory, a map of it on a device, and an inventory. */
struct mem {
	uint8_t *bytes;
	size_t len;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
};

static inline void mem_open(struct mem *m, struct doca_dev *dev, size_t len, size_t nbufs)
{
	m->len = len;
	m->bytes = (uint8_t *)calloc(1, len);
	ASSERT(m->bytes != NULL);
	CHECK(doca_mmap_create(&m->mmap));
	CHECK(doca_mmap_set_memrange(m->mmap, m->bytes, len));
	CHECK(doca_mmap_set_permissions(m->mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(doca_mmap_add_dev(m->mmap, dev));
	CHECK(doca_mmap_start(m->mmap));
	CHECK(doca_buf_inventory_create(nbufs, &m->inv));
	CHECK(doca_buf_inventory_start(m->inv));
}

static inline void mem_close(struct mem *m)
{
	CHECK(doca_buf_inventory_stop(m->inv));
	CHECK(doca_buf_inventory_destroy(m->inv));
	CHECK(doca_mmap_stop(m->mmap));
	CHECK(doca_mmap_destroy(m->mmap));
	free(m->bytes);
}

#endif /* DOCA_CAPI_TEST_COMMON3_H_ */
