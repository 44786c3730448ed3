/*
 * dma_local_copy: a DOCA 2.2 program in the shape of DOCA's "DMA local copy" sample. On
 * the DPU, it copies a text from one buffer to another with a DMA memcpy job and checks
 * the copy. Like DOCA's sample it refuses to run unless built for the DPU, opens the
 * device at 03:00.0 unless -p names another, and never sets mmap permissions (a new mmap
 * lets the local device read and write).
 *
 *   dma_local_copy [-p PCI] [-t TEXT]
 *
 * Build: gcc dma_local_copy.c $(pkg-config --cflags --libs doca-dpu)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_buf_inventory.h>
#include <doca_dma.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(DMA_LOCAL_COPY);

#define MAX_TEXT 4096
#define WORKQ_DEPTH 32
#define SLEEP_NS 10000

struct dma_config {
	char pci_address[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char cpy_txt[MAX_TEXT];
};

static doca_error_t pci_address_callback(void *param, void *config)
{
	struct dma_config *conf = config;
	const char *addr = param;

	if (strnlen(addr, DOCA_DEVINFO_PCI_ADDR_SIZE) == DOCA_DEVINFO_PCI_ADDR_SIZE) {
		DOCA_LOG_ERR("PCI address is too long: at most %d characters", DOCA_DEVINFO_PCI_ADDR_SIZE - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(conf->pci_address, addr);
	return DOCA_SUCCESS;
}

static doca_error_t text_callback(void *param, void *config)
{
	struct dma_config *conf = config;
	const char *txt = param;

	if (strnlen(txt, MAX_TEXT) == MAX_TEXT) {
		DOCA_LOG_ERR("text is too long: at most %d characters", MAX_TEXT - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(conf->cpy_txt, txt);
	return DOCA_SUCCESS;
}

static doca_error_t register_dma_params(void)
{
	struct doca_argp_param *pci, *txt;
	doca_error_t result;

	result = doca_argp_param_create(&pci);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(pci, "p");
	doca_argp_param_set_long_name(pci, "pci-addr");
	doca_argp_param_set_description(pci, "DOCA DMA device PCI address - default: 03:00.0");
	doca_argp_param_set_callback(pci, pci_address_callback);
	doca_argp_param_set_type(pci, DOCA_ARGP_TYPE_STRING);
	result = doca_argp_register_param(pci);
	if (result != DOCA_SUCCESS)
		return result;

	result = doca_argp_param_create(&txt);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(txt, "t");
	doca_argp_param_set_long_name(txt, "text");
	doca_argp_param_set_description(txt, "Text to DMA copy from one memory location to another");
	doca_argp_param_set_callback(txt, text_callback);
	doca_argp_param_set_type(txt, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(txt);
}

static doca_error_t open_device_with_pci(const char *pci_addr, struct doca_dev **dev)
{
	struct doca_devinfo **dev_list;
	uint32_t nb_devs, i;
	uint8_t is_equal;
	doca_error_t result;

	result = doca_devinfo_list_create(&dev_list, &nb_devs);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to load doca devices list: %s", doca_get_error_string(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < nb_devs; i++) {
		if (doca_devinfo_get_is_pci_addr_equal(dev_list[i], pci_addr, &is_equal) != DOCA_SUCCESS || !is_equal)
			continue;
		if (doca_dma_job_get_supported(dev_list[i], DOCA_DMA_JOB_MEMCPY) != DOCA_SUCCESS)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		break;
	}
	doca_devinfo_list_destroy(dev_list);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("No DMA device at %s: %s", pci_addr, doca_get_error_string(result));
	return result;
}

static doca_error_t dma_local_copy(const char *pcie_addr, const char *copy_text)
{
	struct doca_dev *dev = NULL;
	struct doca_dma *dma = NULL;
	struct doca_ctx *ctx;
	struct doca_workq *workq = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *src_buf = NULL, *dst_buf = NULL;
	struct doca_dma_job_memcpy dma_job = {0};
	struct doca_event event = {0};
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	size_t length = strlen(copy_text) + 1;
	char *memory, *src_buffer, *dst_buffer;
	doca_error_t result;

	memory = calloc(2, length);
	if (memory == NULL)
		return DOCA_ERROR_NO_MEMORY;
	src_buffer = memory;
	dst_buffer = memory + length;
	memcpy(src_buffer, copy_text, length);

	result = open_device_with_pci(pcie_addr, &dev);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_dma_create(&dma);
	if (result != DOCA_SUCCESS)
		goto out;
	ctx = doca_dma_as_ctx(dma);
	if ((result = doca_ctx_dev_add(ctx, dev)) != DOCA_SUCCESS || (result = doca_ctx_start(ctx)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_workq_create(WORKQ_DEPTH, &workq)) != DOCA_SUCCESS ||
	    (result = doca_ctx_workq_add(ctx, workq)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_mmap_create(NULL, &mmap)) != DOCA_SUCCESS ||
	    (result = doca_mmap_dev_add(mmap, dev)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_memrange(mmap, memory, 2 * length)) != DOCA_SUCCESS ||
	    (result = doca_mmap_start(mmap)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &inv)) != DOCA_SUCCESS ||
	    (result = doca_buf_inventory_start(inv)) != DOCA_SUCCESS)
		goto out;
	result = doca_buf_inventory_buf_by_addr(inv, mmap, src_buffer, length, &src_buf);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_buf_inventory_buf_by_addr(inv, mmap, dst_buffer, length, &dst_buf);
	if (result != DOCA_SUCCESS)
		goto out;
	result = doca_buf_set_data(src_buf, src_buffer, length);
	if (result != DOCA_SUCCESS)
		goto out;

	dma_job.base.type = DOCA_DMA_JOB_MEMCPY;
	dma_job.base.flags = DOCA_JOB_FLAGS_NONE;
	dma_job.base.ctx = ctx;
	dma_job.dst_buff = dst_buf;
	dma_job.src_buff = src_buf;
	result = doca_workq_submit(workq, &dma_job.base);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to submit DMA job: %s", doca_get_error_string(result));
		goto out;
	}
	while ((result = doca_workq_progress_retrieve(workq, &event, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
	       DOCA_ERROR_AGAIN)
		nanosleep(&ts, &ts);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to retrieve DMA job: %s", doca_get_error_string(result));
		goto out;
	}
	result = (doca_error_t)event.result.u64;
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("DMA job event returned unsuccessfully: %s", doca_get_error_string(result));
		goto out;
	}
	if (memcmp(src_buffer, dst_buffer, length) != 0) {
		DOCA_LOG_ERR("Destination differs from the source after the copy");
		result = DOCA_ERROR_UNEXPECTED;
		goto out;
	}
	DOCA_LOG_INFO("Success, memory copied and verified as correct (%" PRIu64 " bytes): %s", (uint64_t)length,
		      dst_buffer);

out:
	if (dst_buf != NULL)
		doca_buf_refcount_rm(dst_buf, NULL);
	if (src_buf != NULL)
		doca_buf_refcount_rm(src_buf, NULL);
	if (inv != NULL) {
		doca_buf_inventory_stop(inv);
		doca_buf_inventory_destroy(inv);
	}
	if (mmap != NULL) {
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	if (workq != NULL) {
		doca_ctx_workq_rm(doca_dma_as_ctx(dma), workq);
		doca_workq_destroy(workq);
	}
	if (dma != NULL) {
		doca_ctx_stop(doca_dma_as_ctx(dma));
		doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev);
		doca_dma_destroy(dma);
	}
	if (dev != NULL)
		doca_dev_close(dev);
	free(memory);
	return result;
}

int main(int argc, char **argv)
{
	struct dma_config dma_conf = {0};
	doca_error_t result;

	strcpy(dma_conf.pci_address, "03:00.0");
	strcpy(dma_conf.cpy_txt, "This is a sample piece of text");

	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
#ifndef DOCA_ARCH_DPU
	DOCA_LOG_ERR("Sample can run only on the DPU");
	return EXIT_FAILURE;
#endif
	result = doca_argp_init("dma_local_copy", &dma_conf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to init ARGP resources: %s", doca_get_error_string(result));
		return EXIT_FAILURE;
	}
	result = register_dma_params();
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to register DMA sample parameters: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = dma_local_copy(dma_conf.pci_address, dma_conf.cpy_txt);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
