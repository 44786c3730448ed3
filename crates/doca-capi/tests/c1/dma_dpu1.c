/*
 * The DPU side of a 1.x host-to-DPU DMA: lists the host functions its device reaches
 * (remote devices, with their properties) and opens the host's, creates a memory map
 * from the host's export, copies the host's text into local memory with a DMA job, then
 * writes its reply back into the host's memory.
 *
 *   dma_dpu1 [-p BB:DD.F] [-r BB:DD.F] [-w REPLY] [-d DIR]     (built with doca-1-dpu)
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dma.h>
#include <doca_mmap.h>

#include "dma_pair1.h"

DOCA_LOG_REGISTER(DMA_DPU1);

struct dpu_config {
	char pci[16];	     /* The DPU device. */
	char host_pci[16];   /* The host function it serves. */
	char reply[MAX_TEXT]; /* What goes back. */
	char dir[MAX_PATH];   /* Where the host's files are. */
};

static doca_error_t pci_callback(void *param, void *config)
{
	struct dpu_config *conf = config;

	if (strlen(param) >= sizeof(conf->pci))
		return DOCA_ERROR_INVALID_VALUE;
	strcpy(conf->pci, param);
	return DOCA_SUCCESS;
}

static doca_error_t host_pci_callback(void *param, void *config)
{
	struct dpu_config *conf = config;

	if (strlen(param) >= sizeof(conf->host_pci))
		return DOCA_ERROR_INVALID_VALUE;
	strcpy(conf->host_pci, param);
	return DOCA_SUCCESS;
}

static doca_error_t reply_callback(void *param, void *config)
{
	struct dpu_config *conf = config;

	if (strlen(param) >= MAX_TEXT)
		return DOCA_ERROR_INVALID_VALUE;
	strcpy(conf->reply, param);
	return DOCA_SUCCESS;
}

static doca_error_t dir_callback(void *param, void *config)
{
	struct dpu_config *conf = config;

	if (strlen(param) >= MAX_PATH - 32)
		return DOCA_ERROR_INVALID_VALUE;
	strcpy(conf->dir, param);
	return DOCA_SUCCESS;
}

static doca_error_t add_param(const char *s, const char *l, const char *d, callback_func cb)
{
	struct doca_argp_param *p;
	doca_error_t result = doca_argp_param_create(&p);

	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	doca_argp_param_set_description(p, d);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(p);
}

/* Finds the remote device at host_pci among those dev reaches, opens and closes it. */
static doca_error_t check_remote(struct doca_dev *dev, const char *host_pci)
{
	struct doca_devinfo_remote **list, *info;
	struct doca_dev_remote *remote = NULL;
	struct doca_pci_bdf want, addr;
	char vuid[128];
	uint32_t n = 0, i;
	doca_error_t result;

	result = parse_pci_addr(host_pci, &want);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_devinfo_remote_list_create(dev, DOCA_DEV_REMOTE_FILTER_NET, &list, &n);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to list remote devices: %s", doca_get_error_string(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_remote_property_get(list[i], DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR, (uint8_t *)&addr,
						     sizeof(addr)) != DOCA_SUCCESS ||
		    doca_devinfo_remote_property_get(list[i], DOCA_DEVINFO_REMOTE_PROPERTY_VUID, (uint8_t *)vuid,
						     sizeof(vuid)) != DOCA_SUCCESS)
			continue;
		printf("dma_dpu1: remote device %02x:%02x.%x vuid %s\n", addr.bus, addr.device, addr.function, vuid);
		if (addr.raw == want.raw && remote == NULL)
			result = doca_dev_remote_open(list[i], &remote);
	}
	doca_devinfo_remote_list_destroy(list);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No remote device at %s: %s", host_pci, doca_get_error_string(result));
		return result;
	}
	result = doca_dev_remote_as_devinfo(remote, &info);
	if (result == DOCA_SUCCESS)
		result = doca_devinfo_remote_property_get(info, DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR, (uint8_t *)&addr,
							  sizeof(addr));
	if (result == DOCA_SUCCESS && addr.raw != want.raw)
		result = DOCA_ERROR_UNEXPECTED;
	doca_dev_remote_close(remote);
	return result;
}

/* Runs one memcpy of n bytes and waits for it. */
static doca_error_t copy(struct doca_workq *wq, struct doca_ctx *ctx, struct doca_buf *src, struct doca_buf *dst,
			 size_t n)
{
	struct doca_dma_job_memcpy job = {0};
	struct doca_event ev = {0};
	doca_error_t result;

	job.base.type = DOCA_DMA_JOB_MEMCPY;
	job.base.flags = DOCA_JOB_FLAGS_NONE;
	job.base.ctx = ctx;
	job.dst_buff = dst;
	job.src_buff = src;
	job.num_bytes_to_copy = n;
	result = doca_workq_submit(wq, &job.base);
	if (result != DOCA_SUCCESS)
		return result;
	while ((result = doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
	if (result == DOCA_ERROR_IO_FAILED)
		result = (doca_error_t)ev.result.u64;
	return result;
}

static doca_error_t dpu_side(const struct dpu_config *conf)
{
	struct doca_dev *dev = NULL;
	struct doca_mmap *remote_mmap = NULL, *mmap = NULL;
	struct doca_buf_inventory *inv = NULL;
	struct doca_dma *dma = NULL;
	struct doca_ctx *ctx = NULL;
	struct doca_workq *wq = NULL;
	struct doca_buf *remote_buf = NULL, *local_buf = NULL;
	uint8_t desc[4096];
	size_t desc_len;
	uint64_t host_addr = 0;
	int host_len = 0;
	char *local = calloc(1, MAX_TEXT);
	uint32_t max_chunks = 1;
	char desc_path[MAX_PATH], info_path[MAX_PATH];
	FILE *f;
	doca_error_t result;

	if (local == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (pair_path(desc_path, conf->dir, DESC_FILE) != DOCA_SUCCESS ||
	    pair_path(info_path, conf->dir, INFO_FILE) != DOCA_SUCCESS) {
		free(local);
		return DOCA_ERROR_INVALID_VALUE;
	}
	result = open_device_at(conf->pci, &dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No device at %s: %s", conf->pci, doca_get_error_string(result));
		free(local);
		return result;
	}
	result = check_remote(dev, conf->host_pci);
	if (result != DOCA_SUCCESS)
		goto out;
	f = fopen(desc_path, "rb");
	desc_len = f != NULL ? fread(desc, 1, sizeof(desc), f) : 0;
	if (f != NULL)
		fclose(f);
	f = fopen(info_path, "r");
	if (desc_len == 0 || f == NULL || fscanf(f, "%" SCNu64 "%d", &host_addr, &host_len) != 2 || host_len <= 0 ||
	    host_len > MAX_TEXT) {
		DOCA_LOG_ERR("Failed to read %s and %s", desc_path, info_path);
		if (f != NULL)
			fclose(f);
		result = DOCA_ERROR_IO_FAILED;
		goto out;
	}
	fclose(f);
	/* The descriptor is JSON text: the exported range is its "addr" and "len", which the
	 * host's buffer lies in. It is passed as 1.x programs pass it: strlen() + 1 bytes. */
	desc[desc_len < sizeof(desc) ? desc_len : sizeof(desc) - 1] = 0;
	{
		struct json_object *root = json_tokener_parse((const char *)desc), *jaddr, *jlen;
		int64_t addr, len;

		if (root == NULL || !json_object_object_get_ex(root, "addr", &jaddr) ||
		    !json_object_object_get_ex(root, "len", &jlen)) {
			DOCA_LOG_ERR("The export descriptor is not JSON with addr and len");
			json_object_put(root);
			result = DOCA_ERROR_INVALID_VALUE;
			goto out;
		}
		addr = json_object_get_int64(jaddr);
		len = json_object_get_int64(jlen);
		json_object_put(root);
		if ((uint64_t)addr > host_addr || (uint64_t)(addr + len) < host_addr + (uint64_t)host_len) {
			DOCA_LOG_ERR("The exported range does not hold the host's buffer");
			result = DOCA_ERROR_INVALID_VALUE;
			goto out;
		}
		DOCA_LOG_INFO("Exported range: %" PRId64 " bytes at 0x%" PRIx64, len, addr);
	}
	desc_len = strlen((const char *)desc) + 1;
	result = doca_mmap_create_from_export("remote_mmap", desc, desc_len, dev, &remote_mmap);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create mmap from export: %s", doca_get_error_string(result));
		goto out;
	}
	result = doca_mmap_create("local_mmap", &mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_property_set(mmap, DOCA_MMAP_MAX_NUM_CHUNKS, (const uint8_t *)&max_chunks,
						sizeof(max_chunks));
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_dev_add(mmap, dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_populate(mmap, local, MAX_TEXT, 4096, NULL, NULL);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_create("dpu_inventory", 2, DOCA_BUF_EXTENSION_NONE, &inv);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_start(inv);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_by_addr(inv, remote_mmap, (void *)(uintptr_t)host_addr, host_len,
							&remote_buf);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_by_addr(inv, mmap, local, MAX_TEXT, &local_buf);
	if (result == DOCA_SUCCESS)
		result = doca_dma_create(&dma);
	if (result == DOCA_SUCCESS) {
		ctx = doca_dma_as_ctx(dma);
		result = doca_ctx_dev_add(ctx, dev);
	}
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(ctx);
	if (result == DOCA_SUCCESS)
		result = doca_workq_create(8, &wq);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_workq_add(ctx, wq);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to set up: %s", doca_get_error_string(result));
		goto out;
	}
	result = copy(wq, ctx, remote_buf, local_buf, (size_t)host_len);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("DMA read of the host's memory failed: %s", doca_get_error_string(result));
		goto out;
	}
	printf("dma_dpu1: Memory content: %s\n", local);
	memset(local, 0, MAX_TEXT);
	strcpy(local, conf->reply);
	result = copy(wq, ctx, local_buf, remote_buf, strlen(conf->reply) + 1);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("DMA write into the host's memory failed: %s", doca_get_error_string(result));
		goto out;
	}
	printf("dma_dpu1: wrote back into host memory\n");
out:
	if (wq != NULL) {
		doca_ctx_workq_rm(ctx, wq);
		doca_workq_destroy(wq);
	}
	if (ctx != NULL) {
		doca_ctx_stop(ctx);
		doca_ctx_dev_rm(ctx, dev);
	}
	if (dma != NULL)
		doca_dma_destroy(dma);
	if (remote_buf != NULL)
		doca_buf_refcount_rm(remote_buf, NULL);
	if (local_buf != NULL)
		doca_buf_refcount_rm(local_buf, NULL);
	if (inv != NULL) {
		doca_buf_inventory_stop(inv);
		doca_buf_inventory_destroy(inv);
	}
	if (mmap != NULL) {
		doca_mmap_dev_rm(mmap, dev);
		doca_mmap_stop(mmap);
		doca_mmap_destroy(mmap);
	}
	if (remote_mmap != NULL)
		doca_mmap_destroy(remote_mmap);
	doca_dev_close(dev);
	free(local);
	return result;
}

int main(int argc, char **argv)
{
	struct dpu_config conf = {0};
	doca_error_t result;

	strcpy(conf.pci, "03:00.0");
	strcpy(conf.host_pci, "3b:00.0");
	strcpy(conf.reply, "reply from the DPU");
	strcpy(conf.dir, "/tmp");
	result = doca_argp_init("dma_dpu1", &conf);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = add_param("p", "pci-addr", "DPU device PCI address - default: 03:00.0", pci_callback);
	if (result == DOCA_SUCCESS)
		result = add_param("r", "rep-pci", "Host function PCI address - default: 3b:00.0", host_pci_callback);
	if (result == DOCA_SUCCESS)
		result = add_param("w", "reply", "Text written back into the host's memory", reply_callback);
	if (result == DOCA_SUCCESS)
		result = add_param("d", "dir", "Directory of the host's files - default: /tmp", dir_callback);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result == DOCA_SUCCESS)
		result = dpu_side(&conf);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("DPU side failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
