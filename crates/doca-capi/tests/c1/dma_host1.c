/*
 * The host side of a 1.x host-to-DPU DMA: exports a memory map of one chunk holding a
 * text, writes the export descriptor and the buffer's address and length to files, and
 * waits (a line on stdin) while the DPU side reads the text and writes its reply.
 *
 *   dma_host1 [-p BB:DD.F] [-t TEXT] [-d DIR]
 */
#include <inttypes.h>
#include <stdlib.h>

#include <doca_argp.h>
#include <doca_mmap.h>

#include "dma_pair1.h"

DOCA_LOG_REGISTER(DMA_HOST1);

struct host_config {
	char pci[16];
	char text[MAX_TEXT];
	char dir[MAX_PATH];
};

static doca_error_t pci_callback(void *param, void *config)
{
	struct host_config *conf = config;
	struct doca_pci_bdf bdf;

	if (strlen(param) >= sizeof(conf->pci) || parse_pci_addr(param, &bdf) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("PCI address must look like BB:DD.F");
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(conf->pci, param);
	return DOCA_SUCCESS;
}

static doca_error_t text_callback(void *param, void *config)
{
	struct host_config *conf = config;

	if (strlen(param) >= MAX_TEXT) {
		DOCA_LOG_ERR("Text is too long: at most %d characters", MAX_TEXT - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(conf->text, param);
	return DOCA_SUCCESS;
}

static doca_error_t dir_callback(void *param, void *config)
{
	struct host_config *conf = config;

	if (strlen(param) >= MAX_PATH - 32) {
		DOCA_LOG_ERR("Directory name is too long");
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(conf->dir, param);
	return DOCA_SUCCESS;
}

static doca_error_t register_params(void)
{
	struct doca_argp_param *p, *t, *d;
	doca_error_t result;

	result = doca_argp_param_create(&p);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(p, "p");
	doca_argp_param_set_long_name(p, "pci-addr");
	doca_argp_param_set_description(p, "Host device PCI address - default: 3b:00.0");
	doca_argp_param_set_callback(p, pci_callback);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	result = doca_argp_register_param(p);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_argp_param_create(&t);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(t, "t");
	doca_argp_param_set_long_name(t, "text");
	doca_argp_param_set_description(t, "Text the DPU side reads");
	doca_argp_param_set_callback(t, text_callback);
	doca_argp_param_set_type(t, DOCA_ARGP_TYPE_STRING);
	result = doca_argp_register_param(t);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_argp_param_create(&d);
	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(d, "d");
	doca_argp_param_set_long_name(d, "dir");
	doca_argp_param_set_description(d, "Directory of the files both sides meet through - default: /tmp");
	doca_argp_param_set_callback(d, dir_callback);
	doca_argp_param_set_type(d, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(d);
}

static doca_error_t host_side(const struct host_config *conf)
{
	struct doca_dev *dev = NULL;
	struct doca_mmap *mmap = NULL;
	uint8_t *desc = NULL;
	size_t desc_len = 0;
	char *buffer = calloc(1, MAX_TEXT);
	char line[8], desc_path[MAX_PATH], info_path[MAX_PATH], tmp_path[MAX_PATH];
	FILE *f;
	doca_error_t result;

	if (buffer == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (pair_path(desc_path, conf->dir, DESC_FILE) != DOCA_SUCCESS ||
	    pair_path(info_path, conf->dir, INFO_FILE) != DOCA_SUCCESS ||
	    pair_path(tmp_path, conf->dir, INFO_FILE ".tmp") != DOCA_SUCCESS) {
		free(buffer);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(buffer, conf->text);
	result = open_device_at(conf->pci, &dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No device at %s: %s", conf->pci, doca_get_error_string(result));
		free(buffer);
		return result;
	}
	result = doca_mmap_create("host_mmap", &mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_dev_add(mmap, dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_populate(mmap, buffer, MAX_TEXT, 4096, NULL, NULL);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_export(mmap, dev, &desc, &desc_len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to export the memory map: %s", doca_get_error_string(result));
		goto out;
	}
	f = fopen(desc_path, "wb");
	if (f == NULL || fwrite(desc, 1, desc_len, f) != desc_len || fclose(f) != 0) {
		DOCA_LOG_ERR("Failed to write %s", desc_path);
		result = DOCA_ERROR_IO_FAILED;
		goto out;
	}
	f = fopen(tmp_path, "w");
	if (f == NULL || fprintf(f, "%" PRIu64 "\n%d\n", (uint64_t)(uintptr_t)buffer, MAX_TEXT) < 0 ||
	    fclose(f) != 0 || rename(tmp_path, info_path) != 0) {
		DOCA_LOG_ERR("Failed to write %s", info_path);
		result = DOCA_ERROR_IO_FAILED;
		goto out;
	}
	DOCA_LOG_INFO("Exported %zu bytes of descriptor; waiting for the DPU side (press Enter when it is done)",
		      desc_len);
	if (fgets(line, sizeof(line), stdin) == NULL)
		DOCA_LOG_WARN("stdin closed");
	printf("dma_host1: Memory content: %s\n", buffer);
out:
	free(desc);
	if (mmap != NULL) {
		doca_mmap_dev_rm(mmap, dev);
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	doca_dev_close(dev);
	free(buffer);
	return result;
}

int main(int argc, char **argv)
{
	struct host_config conf = {0};
	doca_error_t result;

	strcpy(conf.pci, "3b:00.0");
	strcpy(conf.text, "This is a sample piece of text");
	strcpy(conf.dir, "/tmp");
	result = doca_argp_init("dma_host1", &conf);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = register_params();
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result == DOCA_SUCCESS)
		result = host_side(&conf);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Host side failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
