/*
 * dma_local_copy: a DOCA 3.x program in the shape of DOCA's "DMA local copy" sample. On
 * the DPU, it copies a text from one buffer to another with a DMA memcpy task on a
 * progress engine and checks the copy. Like DOCA's sample it refuses to run unless
 * built for the DPU, opens the device at 03:00.0 unless -p names another, stops the
 * context from the task's callback, and progresses until the context is idle.
 *
 *   dma_local_copy [-p PCI] [-t TEXT]
 *
 * Build: gcc dma_local_copy.c $(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig/dpu \
 *            pkg-config --cflags --libs doca-common doca-dma doca-argp)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>

DOCA_LOG_REGISTER(DMA_LOCAL_COPY);

#define MAX_TEXT 4096
#define NUM_TASKS 1
#define SLEEP_NS 10000

struct dma_config {
	char pci_address[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char cpy_txt[MAX_TEXT];
};

struct dma_run {
	struct doca_ctx *ctx;
	bool running;
	doca_error_t task_result;
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

	result = doca_devinfo_create_list(&dev_list, &nb_devs);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to load doca devices list: %s", doca_error_get_descr(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < nb_devs; i++) {
		if (doca_devinfo_is_equal_pci_addr(dev_list[i], pci_addr, &is_equal) != DOCA_SUCCESS || !is_equal)
			continue;
		if (doca_dma_cap_task_memcpy_is_supported(dev_list[i]) != DOCA_SUCCESS)
			continue;
		result = doca_dev_open(dev_list[i], dev);
		break;
	}
	doca_devinfo_destroy_list(dev_list);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("No DMA device at %s: %s", pci_addr, doca_error_get_descr(result));
	return result;
}

static void memcpy_done(struct doca_dma_task_memcpy *task, union doca_data task_user_data,
			union doca_data ctx_user_data)
{
	struct dma_run *run = ctx_user_data.ptr;
	doca_error_t *result = task_user_data.ptr;

	*result = doca_task_get_status(doca_dma_task_memcpy_as_task(task));
	doca_task_free(doca_dma_task_memcpy_as_task(task));
	(void)doca_ctx_stop(run->ctx);
}

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev_state,
			  enum doca_ctx_states next_state)
{
	struct dma_run *run = user_data.ptr;

	(void)ctx;
	(void)prev_state;
	if (next_state == DOCA_CTX_STATE_IDLE) {
		DOCA_LOG_INFO("DMA context has been stopped");
		run->running = false;
	} else if (next_state == DOCA_CTX_STATE_RUNNING) {
		DOCA_LOG_INFO("DMA context is running");
	}
}

static doca_error_t dma_local_copy(const char *pcie_addr, const char *copy_text)
{
	struct doca_dev *dev = NULL;
	struct doca_dma *dma = NULL;
	struct doca_pe *pe = NULL;
	struct doca_mmap *mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_buf *src_buf = NULL, *dst_buf = NULL;
	struct doca_dma_task_memcpy *task = NULL;
	struct dma_run run = {.task_result = DOCA_ERROR_UNKNOWN};
	union doca_data ctx_data = {.ptr = &run}, task_data = {.ptr = &run.task_result};
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
	if ((result = doca_mmap_create(&mmap)) != DOCA_SUCCESS ||
	    (result = doca_mmap_add_dev(mmap, dev)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_memrange(mmap, memory, 2 * length)) != DOCA_SUCCESS ||
	    (result = doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE)) != DOCA_SUCCESS ||
	    (result = doca_mmap_start(mmap)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_buf_inventory_create(2, &inv)) != DOCA_SUCCESS ||
	    (result = doca_buf_inventory_start(inv)) != DOCA_SUCCESS)
		goto out;
	if ((result = doca_buf_inventory_buf_get_by_data(inv, mmap, src_buffer, length, &src_buf)) != DOCA_SUCCESS ||
	    (result = doca_buf_inventory_buf_get_by_addr(inv, mmap, dst_buffer, length, &dst_buf)) != DOCA_SUCCESS)
		goto out;

	if ((result = doca_pe_create(&pe)) != DOCA_SUCCESS || (result = doca_dma_create(dev, &dma)) != DOCA_SUCCESS)
		goto out;
	run.ctx = doca_dma_as_ctx(dma);
	if ((result = doca_pe_connect_ctx(pe, run.ctx)) != DOCA_SUCCESS ||
	    (result = doca_ctx_set_user_data(run.ctx, ctx_data)) != DOCA_SUCCESS ||
	    (result = doca_ctx_set_state_changed_cb(run.ctx, state_changed)) != DOCA_SUCCESS ||
	    (result = doca_dma_task_memcpy_set_conf(dma, memcpy_done, memcpy_done, NUM_TASKS)) != DOCA_SUCCESS ||
	    (result = doca_ctx_start(run.ctx)) != DOCA_SUCCESS)
		goto out;
	run.running = true;

	result = doca_dma_task_memcpy_alloc_init(dma, src_buf, dst_buf, task_data, &task);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to allocate a memcpy task: %s", doca_error_get_descr(result));
		goto out;
	}
	result = doca_task_submit(doca_dma_task_memcpy_as_task(task));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to submit the memcpy task: %s", doca_error_get_descr(result));
		doca_task_free(doca_dma_task_memcpy_as_task(task));
		goto out;
	}
	while (run.running)
		if (doca_pe_progress(pe) == 0)
			nanosleep(&ts, &ts);

	result = run.task_result;
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("DMA memcpy task failed: %s", doca_error_get_descr(result));
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
	if (dma != NULL) {
		(void)doca_ctx_stop(doca_dma_as_ctx(dma));
		doca_dma_destroy(dma);
	}
	if (pe != NULL)
		doca_pe_destroy(pe);
	if (dst_buf != NULL)
		doca_buf_dec_refcount(dst_buf, NULL);
	if (src_buf != NULL)
		doca_buf_dec_refcount(src_buf, NULL);
	if (inv != NULL) {
		doca_buf_inventory_stop(inv);
		doca_buf_inventory_destroy(inv);
	}
	if (mmap != NULL) {
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	if (dev != NULL)
		doca_dev_close(dev);
	free(memory);
	return result;
}

int main(int argc, char **argv)
{
	struct dma_config dma_conf = {0};
	struct doca_log_backend *sdk_log;
	doca_error_t result;

	strcpy(dma_conf.pci_address, "03:00.0");
	strcpy(dma_conf.cpy_txt, "This is a sample piece of text");

	result = doca_log_backend_create_standard();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_log_backend_create_with_file_sdk(stderr, &sdk_log);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
#ifndef DOCA_ARCH_DPU
	DOCA_LOG_ERR("Sample can run only on the DPU");
	return EXIT_FAILURE;
#endif
	result = doca_argp_init(NULL, &dma_conf);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to init ARGP resources: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	result = register_dma_params();
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to register DMA sample parameters: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = dma_local_copy(dma_conf.pci_address, dma_conf.cpy_txt);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_error_get_descr(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
