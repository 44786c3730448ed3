/*
 * doca_compress.h: compress and decompress (task generation): a compress instance on a
 * device and its tasks: compress deflate, decompress deflate (raw deflate, as the
 * hardware produces and takes it), decompress LZ4 stream (blocks without the frame) and
 * decompress LZ4 block (one data-only block). A completed task reports two checksums of
 * the uncompressed data: CRC-32 with Adler-32 (deflate) or with xxHash-32 (LZ4).
 */
#ifndef DOCA_COMPRESS_H_
#define DOCA_COMPRESS_H_

#include <inttypes.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_task;
struct doca_compress;

/** Creates an idle compress instance on a device that has the compress capability. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_create(struct doca_dev *dev, struct doca_compress **compress);

/** Destroys an idle instance whose tasks are all freed. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_destroy(struct doca_compress *compress);

/** The instance's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_compress_as_ctx(struct doca_compress *compress);

/** The most tasks the instance's task types may hold together. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_get_max_num_tasks(struct doca_compress *compress, uint32_t *max_num_tasks);

/* ---- compress deflate ---- */

/** The raw deflate of the source's data is appended to the destination; the checksums are of the source's data. */
struct doca_compress_task_compress_deflate;

/** The callback of a completed (or failed) compress deflate task. */
typedef void (*doca_compress_task_compress_deflate_completion_cb_t)(struct doca_compress_task_compress_deflate *task, union doca_data task_user_data,
					union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs compress deflate tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_compress_deflate_is_supported(const struct doca_devinfo *devinfo);

/** The largest source or destination of a compress deflate task, in bytes. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_compress_deflate_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** The longest buffer list a compress deflate task's source or destination may be (1: single buffers only). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_compress_deflate_get_max_buf_list_len(const struct doca_devinfo *devinfo,
						uint32_t *max_buf_list_len);

/** Configures the instance's compress deflate tasks: their callbacks and how many may exist (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_compress_deflate_set_conf(struct doca_compress *compress,
				doca_compress_task_compress_deflate_completion_cb_t task_completion_cb,
				doca_compress_task_compress_deflate_completion_cb_t task_error_cb,
				uint32_t num_tasks);

/** Takes a compress deflate task from the instance's pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_compress_deflate_alloc_init(struct doca_compress *compress,
				struct doca_buf const *src_buff,
				struct doca_buf *dst_buff,
				union doca_data user_data,
				struct doca_compress_task_compress_deflate **task);

/** The task as a doca_task (submit, free, user data, status). */
DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_compress_deflate_as_task(struct doca_compress_task_compress_deflate *task);

/** Sets the source. */
DOCA_EXPERIMENTAL
void doca_compress_task_compress_deflate_set_src(struct doca_compress_task_compress_deflate *task, struct doca_buf const *src_buff);

/** The source. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_compress_task_compress_deflate_get_src(const struct doca_compress_task_compress_deflate *task);

/** Sets the destination. */
DOCA_EXPERIMENTAL
void doca_compress_task_compress_deflate_set_dst(struct doca_compress_task_compress_deflate *task, struct doca_buf *dst_buff);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_compress_deflate_get_dst(const struct doca_compress_task_compress_deflate *task);

/** The CRC-32 of the uncompressed data (meaningful once the task completed successfully). */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_compress_deflate_get_crc_cs(const struct doca_compress_task_compress_deflate *task);

/** The Adler-32 of the uncompressed data (meaningful once the task completed successfully). */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_compress_deflate_get_adler_cs(const struct doca_compress_task_compress_deflate *task);

/* ---- decompress deflate ---- */

/** The bytes the raw deflate source stands for are appended to the destination; the checksums are of those bytes. */
struct doca_compress_task_decompress_deflate;

/** The callback of a completed (or failed) decompress deflate task. */
typedef void (*doca_compress_task_decompress_deflate_completion_cb_t)(struct doca_compress_task_decompress_deflate *task, union doca_data task_user_data,
					union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs decompress deflate tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_deflate_is_supported(const struct doca_devinfo *devinfo);

/** The largest source or destination of a decompress deflate task, in bytes. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_deflate_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** The longest buffer list a decompress deflate task's source or destination may be (1: single buffers only). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_deflate_get_max_buf_list_len(const struct doca_devinfo *devinfo,
						uint32_t *max_buf_list_len);

/** Configures the instance's decompress deflate tasks: their callbacks and how many may exist (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_deflate_set_conf(struct doca_compress *compress,
				doca_compress_task_decompress_deflate_completion_cb_t task_completion_cb,
				doca_compress_task_decompress_deflate_completion_cb_t task_error_cb,
				uint32_t num_tasks);

/** Takes a decompress deflate task from the instance's pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_deflate_alloc_init(struct doca_compress *compress,
				struct doca_buf const *src_buff,
				struct doca_buf *dst_buff,
				union doca_data user_data,
				struct doca_compress_task_decompress_deflate **task);

/** The task as a doca_task (submit, free, user data, status). */
DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_decompress_deflate_as_task(struct doca_compress_task_decompress_deflate *task);

/** Sets the source. */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_deflate_set_src(struct doca_compress_task_decompress_deflate *task, struct doca_buf const *src_buff);

/** The source. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_compress_task_decompress_deflate_get_src(const struct doca_compress_task_decompress_deflate *task);

/** Sets the destination. */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_deflate_set_dst(struct doca_compress_task_decompress_deflate *task, struct doca_buf *dst_buff);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_decompress_deflate_get_dst(const struct doca_compress_task_decompress_deflate *task);

/** The CRC-32 of the uncompressed data (meaningful once the task completed successfully). */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_deflate_get_crc_cs(const struct doca_compress_task_decompress_deflate *task);

/** The Adler-32 of the uncompressed data (meaningful once the task completed successfully). */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_deflate_get_adler_cs(const struct doca_compress_task_decompress_deflate *task);

/* ---- decompress LZ4 stream ---- */

/** The source is a stream of LZ4 blocks without the frame (no magic number, frame descriptor or content checksum): each block a 4-byte little-endian size (top bit: stored uncompressed), its bytes, and its xxHash-32 when has_block_checksum is 1; blocks refer to earlier ones unless are_blocks_independent is 1. */
struct doca_compress_task_decompress_lz4_stream;

/** The callback of a completed (or failed) decompress LZ4 stream task. */
typedef void (*doca_compress_task_decompress_lz4_stream_completion_cb_t)(struct doca_compress_task_decompress_lz4_stream *task, union doca_data task_user_data,
					union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs decompress LZ4 stream tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_stream_is_supported(const struct doca_devinfo *devinfo);

/** The largest source or destination of a decompress LZ4 stream task, in bytes. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_stream_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** The longest buffer list a decompress LZ4 stream task's source or destination may be (1: single buffers only). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_stream_get_max_buf_list_len(const struct doca_devinfo *devinfo,
						uint32_t *max_buf_list_len);

/** Configures the instance's decompress LZ4 stream tasks: their callbacks and how many may exist (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_stream_set_conf(struct doca_compress *compress,
				doca_compress_task_decompress_lz4_stream_completion_cb_t task_completion_cb,
				doca_compress_task_decompress_lz4_stream_completion_cb_t task_error_cb,
				uint32_t num_tasks);

/** Takes a decompress LZ4 stream task from the instance's pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_stream_alloc_init(struct doca_compress *compress,
				uint8_t has_block_checksum,
				uint8_t are_blocks_independent,
				struct doca_buf const *src_buff,
				struct doca_buf *dst_buff,
				union doca_data user_data,
				struct doca_compress_task_decompress_lz4_stream **task);

/** The task as a doca_task (submit, free, user data, status). */
DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_decompress_lz4_stream_as_task(struct doca_compress_task_decompress_lz4_stream *task);

/** Sets has_block_checksum (1: every block is followed by its xxHash-32). */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_has_block_checksum(struct doca_compress_task_decompress_lz4_stream *task, uint8_t has_block_checksum);

/** has_block_checksum (1: every block is followed by its xxHash-32). */
DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_has_block_checksum(const struct doca_compress_task_decompress_lz4_stream *task);

/** Sets are_blocks_independent (1: no block refers to an earlier one). */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_are_blocks_independent(struct doca_compress_task_decompress_lz4_stream *task, uint8_t are_blocks_independent);

/** are_blocks_independent (1: no block refers to an earlier one). */
DOCA_EXPERIMENTAL
uint8_t doca_compress_task_decompress_lz4_stream_get_are_blocks_independent(const struct doca_compress_task_decompress_lz4_stream *task);

/** Sets the source. */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_src(struct doca_compress_task_decompress_lz4_stream *task, struct doca_buf const *src_buff);

/** The source. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_compress_task_decompress_lz4_stream_get_src(const struct doca_compress_task_decompress_lz4_stream *task);

/** Sets the destination. */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_stream_set_dst(struct doca_compress_task_decompress_lz4_stream *task, struct doca_buf *dst_buff);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_decompress_lz4_stream_get_dst(const struct doca_compress_task_decompress_lz4_stream *task);

/** The CRC-32 of the uncompressed data (meaningful once the task completed successfully). */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_stream_get_crc_cs(const struct doca_compress_task_decompress_lz4_stream *task);

/** The xxHash-32 of the uncompressed data, its bytes in big-endian order as the hardware reports it (compare
 * with htobe32() of an LZ4 frame's little-endian content checksum); meaningful once the task completed successfully. */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_stream_get_xxh_cs(const struct doca_compress_task_decompress_lz4_stream *task);

/* ---- decompress LZ4 block ---- */

/** The source is one compressed, data-only LZ4 block (no size, no checksum). */
struct doca_compress_task_decompress_lz4_block;

/** The callback of a completed (or failed) decompress LZ4 block task. */
typedef void (*doca_compress_task_decompress_lz4_block_completion_cb_t)(struct doca_compress_task_decompress_lz4_block *task, union doca_data task_user_data,
					union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs decompress LZ4 block tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_block_is_supported(const struct doca_devinfo *devinfo);

/** The largest source or destination of a decompress LZ4 block task, in bytes. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_block_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** The longest buffer list a decompress LZ4 block task's source or destination may be (1: single buffers only). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_cap_task_decompress_lz4_block_get_max_buf_list_len(const struct doca_devinfo *devinfo,
						uint32_t *max_buf_list_len);

/** Configures the instance's decompress LZ4 block tasks: their callbacks and how many may exist (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_block_set_conf(struct doca_compress *compress,
				doca_compress_task_decompress_lz4_block_completion_cb_t task_completion_cb,
				doca_compress_task_decompress_lz4_block_completion_cb_t task_error_cb,
				uint32_t num_tasks);

/** Takes a decompress LZ4 block task from the instance's pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_compress_task_decompress_lz4_block_alloc_init(struct doca_compress *compress,
				struct doca_buf const *src_buff,
				struct doca_buf *dst_buff,
				union doca_data user_data,
				struct doca_compress_task_decompress_lz4_block **task);

/** The task as a doca_task (submit, free, user data, status). */
DOCA_EXPERIMENTAL
struct doca_task *doca_compress_task_decompress_lz4_block_as_task(struct doca_compress_task_decompress_lz4_block *task);

/** Sets the source. */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_block_set_src(struct doca_compress_task_decompress_lz4_block *task, struct doca_buf const *src_buff);

/** The source. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_compress_task_decompress_lz4_block_get_src(const struct doca_compress_task_decompress_lz4_block *task);

/** Sets the destination. */
DOCA_EXPERIMENTAL
void doca_compress_task_decompress_lz4_block_set_dst(struct doca_compress_task_decompress_lz4_block *task, struct doca_buf *dst_buff);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_compress_task_decompress_lz4_block_get_dst(const struct doca_compress_task_decompress_lz4_block *task);

/** The CRC-32 of the uncompressed data (meaningful once the task completed successfully). */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_block_get_crc_cs(const struct doca_compress_task_decompress_lz4_block *task);

/** The xxHash-32 of the uncompressed data, its bytes in big-endian order as the hardware reports it (compare
 * with htobe32() of an LZ4 frame's little-endian content checksum); meaningful once the task completed successfully. */
DOCA_EXPERIMENTAL
uint32_t doca_compress_task_decompress_lz4_block_get_xxh_cs(const struct doca_compress_task_decompress_lz4_block *task);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_COMPRESS_H_ */
