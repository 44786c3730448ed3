/* The erasure coding guide's polling flow (section "Erasure Coding Job: Polling WorkQ
 * Mode", with the 2.2 names): encode 10 data blocks into 2 redundancy blocks, delete
 * two blocks, recover them; for Cauchy and Vandermonde matrices. */
#include "common.h"
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_erasure_coding.h>
#include <doca_mmap.h>

#define DATA_BLOCKS 10
#define RDNC_BLOCKS 2
#define BLOCK 4096

static void run(enum doca_ec_matrix_types type, const uint32_t *missing, size_t n_missing)
{
	struct doca_ec *ec_ctx;
	struct doca_ctx *ctx;
	struct doca_devinfo **dev_list;
	struct doca_dev *dev = NULL;
	uint32_t nb_devs, i, j;
	uint32_t workq_depth = 32;
	struct doca_workq *workq;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *buf_inv;
	struct doca_buf *src_doca_buf, *dst_doca_buf;
	struct doca_matrix *create_matrix, *recover_matrix;
	struct doca_event event = {0};
	size_t total = (size_t)(DATA_BLOCKS + RDNC_BLOCKS) * BLOCK;
	/* [0, total): data then redundancy; [total, 2 * total): surviving blocks; then recovered ones. */
	uint8_t *memory_range = aligned_alloc(64, 3 * total);
	uint8_t *data = memory_range, *rdnc = memory_range + (size_t)DATA_BLOCKS * BLOCK;
	uint8_t *survivors = memory_range + total, *recovered = memory_range + 2 * total;
	uint8_t *original = malloc(total);
	size_t len;

	ASSERT(memory_range != NULL && original != NULL);
	for (i = 0; i < DATA_BLOCKS * BLOCK; i++)
		data[i] = (uint8_t)(i * 7 + i / 251 + type);

	/* Create doca_ec object */
	CHECK(doca_ec_create(&ec_ctx));
	ctx = doca_ec_as_ctx(ec_ctx);
	ASSERT(ctx != NULL);

	/* Open a suitable device */
	CHECK(doca_devinfo_list_create(&dev_list, &nb_devs));
	for (i = 0; i < nb_devs; i++) {
		if (doca_ec_job_get_supported(dev_list[i], DOCA_EC_JOB_CREATE) == DOCA_SUCCESS) {
			CHECK(doca_dev_open(dev_list[i], &dev));
			break;
		}
	}
	CHECK(doca_devinfo_list_destroy(dev_list));
	ASSERT(dev != NULL);

	/* Add device and WorkQ to ctx */
	CHECK(doca_ctx_dev_add(ctx, dev));
	CHECK(doca_ctx_start(ctx));
	CHECK(doca_workq_create(workq_depth, &workq));
	CHECK(doca_ctx_workq_add(ctx, workq));

	/* Alloc DOCA buffers */
	CHECK(doca_mmap_create(NULL, &mmap));
	CHECK(doca_buf_inventory_create(NULL, 4, DOCA_BUF_EXTENSION_NONE, &buf_inv));
	CHECK(doca_mmap_set_memrange(mmap, memory_range, 3 * total));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_buf_inventory_start(buf_inv));
	CHECK(doca_buf_inventory_buf_by_data(buf_inv, mmap, data, (size_t)DATA_BLOCKS * BLOCK, &src_doca_buf));
	CHECK(doca_buf_inventory_buf_by_addr(buf_inv, mmap, rdnc, (size_t)RDNC_BLOCKS * BLOCK, &dst_doca_buf));

	/* Prepare the matrix */
	CHECK(doca_ec_matrix_create(ec_ctx, type, DATA_BLOCKS, RDNC_BLOCKS, &create_matrix));

	/* Construct the coding job, submit and retrieve it */
	{
		const struct doca_ec_job_create ec_job = {
			.base = (struct doca_job){
				.type = DOCA_EC_JOB_CREATE,
				.flags = DOCA_JOB_FLAGS_NONE,
				.ctx = ctx,
				.user_data.u64 = 7,
			},
			.create_matrix = create_matrix,
			.src_original_data_buff = src_doca_buf,
			.dst_rdnc_buff = dst_doca_buf,
		};
		CHECK(doca_workq_submit(workq, &ec_job.base));
	}
	CHECK(wait_event(workq, &event));
	ASSERT(event.type == DOCA_EC_JOB_CREATE);
	ASSERT(event.user_data.u64 == 7);
	ASSERT((doca_error_t)event.result.u64 == DOCA_SUCCESS);
	CHECK(doca_buf_get_data_len(dst_doca_buf, &len));
	ASSERT(len == (size_t)RDNC_BLOCKS * BLOCK);
	CHECK(doca_buf_refcount_rm(src_doca_buf, NULL));
	CHECK(doca_buf_refcount_rm(dst_doca_buf, NULL));
	memcpy(original, memory_range, total);

	/* Delete blocks: the first DATA_BLOCKS survivors, in index order, are the source. */
	for (i = 0, j = 0; i < DATA_BLOCKS + RDNC_BLOCKS && j < DATA_BLOCKS; i++) {
		size_t k;
		int lost = 0;

		for (k = 0; k < n_missing; k++)
			lost |= missing[k] == i;
		if (lost)
			continue;
		memcpy(survivors + (size_t)j * BLOCK, memory_range + (size_t)i * BLOCK, BLOCK);
		j++;
	}
	for (i = 0; i < n_missing; i++)
		memset(memory_range + (size_t)missing[i] * BLOCK, 0, BLOCK);

	/* Recover */
	CHECK(doca_ec_recover_matrix_create(create_matrix, ec_ctx, (uint32_t *)missing, n_missing, &recover_matrix));
	CHECK(doca_buf_inventory_buf_by_data(buf_inv, mmap, survivors, (size_t)DATA_BLOCKS * BLOCK, &src_doca_buf));
	CHECK(doca_buf_inventory_buf_by_addr(buf_inv, mmap, recovered, n_missing * BLOCK, &dst_doca_buf));
	{
		const struct doca_ec_job_recover job = {
			.base = {.type = DOCA_EC_JOB_RECOVER, .ctx = ctx, .user_data.u64 = 8},
			.recover_matrix = recover_matrix,
			.src_remaining_data_buff = src_doca_buf,
			.dst_recovered_data_buff = dst_doca_buf,
		};
		CHECK(doca_workq_submit(workq, &job.base));
	}
	CHECK(wait_event(workq, &event));
	ASSERT(event.type == DOCA_EC_JOB_RECOVER && event.user_data.u64 == 8);
	for (i = 0; i < n_missing; i++)
		ASSERT(memcmp(recovered + (size_t)i * BLOCK, original + (size_t)missing[i] * BLOCK, BLOCK) == 0);

	/* Clean and destroy */
	CHECK(doca_buf_refcount_rm(src_doca_buf, NULL));
	CHECK(doca_buf_refcount_rm(dst_doca_buf, NULL));
	CHECK(doca_ec_matrix_destroy(recover_matrix));
	CHECK(doca_ec_matrix_destroy(create_matrix));
	CHECK(doca_ctx_workq_rm(ctx, workq));
	CHECK(doca_workq_destroy(workq));
	CHECK(doca_buf_inventory_stop(buf_inv));
	CHECK(doca_buf_inventory_destroy(buf_inv));
	CHECK(doca_mmap_stop(mmap));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_ctx_stop(ctx));
	CHECK(doca_ctx_dev_rm(ctx, dev));
	CHECK(doca_dev_close(dev));
	CHECK(doca_ec_destroy(ec_ctx));
	free(memory_range);
	free(original);
}

int main(void)
{
	const uint32_t two_data[] = {0, 3};
	const uint32_t data_and_rdnc[] = {9, 10};
	const uint32_t one[] = {5};

	run(DOCA_CODING_MATRIX_CAUCHY, two_data, 2);
	run(DOCA_CODING_MATRIX_CAUCHY, data_and_rdnc, 2);
	run(DOCA_CODING_MATRIX_VANDERMONDE, two_data, 2);
	run(DOCA_CODING_MATRIX_VANDERMONDE, one, 1);
	printf("ec_flow: ok\n");
	return 0;
}
