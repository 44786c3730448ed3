/*
 * doca_aes_gcm.h: AES-GCM encryption and decryption (task generation): an AES-GCM
 * instance on a device, its keys (128 or 256 bits), and its encrypt and decrypt tasks.
 *
 * A task's source holds aad_size bytes of additional authenticated data followed by the
 * payload. Encrypt appends to the destination the additional data, the ciphertext and a
 * tag of tag_size bytes (12 or 16); decrypt takes that and appends the additional data
 * and the plaintext, once the tag matches: otherwise the task fails, the destination's
 * data length does not change and nothing decrypted is left in it. An IV of fewer than
 * 12 bytes is padded with zeros to 12.
 */
#ifndef DOCA_AES_GCM_H_
#define DOCA_AES_GCM_H_

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
struct doca_aes_gcm;
struct doca_aes_gcm_key;

/** Key sizes. */
enum doca_aes_gcm_key_type {
	DOCA_AES_GCM_KEY_128 = 1, /**< 128-bit key (16 bytes) */
	DOCA_AES_GCM_KEY_256 = 2, /**< 256-bit key (32 bytes) */
};

/** Creates an idle AES-GCM instance on a device that has the AES-GCM capability. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_create(struct doca_dev *dev, struct doca_aes_gcm **aes_gcm);

/** Destroys an idle instance whose tasks are freed and whose keys are destroyed (else DOCA_ERROR_IN_USE). */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_destroy(struct doca_aes_gcm *aes_gcm);

/** The instance's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_aes_gcm_as_ctx(struct doca_aes_gcm *aes_gcm);

/** The most tasks the instance's task types may hold together. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_get_max_num_tasks(struct doca_aes_gcm *aes_gcm, uint32_t *max_num_tasks);

/** Makes a key from raw_key (16 or 32 bytes, as raw_key_type says); the instance needs its device. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_key_create(struct doca_aes_gcm *aes_gcm,
				     const void *raw_key,
				     enum doca_aes_gcm_key_type raw_key_type,
				     struct doca_aes_gcm_key **key);

/** Destroys a key; its material is wiped once no task in flight uses it. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_key_destroy(struct doca_aes_gcm_key *key);

/* ---- encrypt ---- */

/** An AES-GCM encrypt task. */
struct doca_aes_gcm_task_encrypt;

/** The callback of a completed (or failed) encrypt task. */
typedef void (*doca_aes_gcm_task_encrypt_completion_cb_t)(struct doca_aes_gcm_task_encrypt *task, union doca_data task_user_data,
					  union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs encrypt tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_encrypt_is_supported(const struct doca_devinfo *devinfo);

/** The longest IV of a encrypt task, in bytes (12). */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_encrypt_get_max_iv_len(const struct doca_devinfo *devinfo, uint32_t *max_iv_len);

/** DOCA_SUCCESS when encrypt tasks take 96-bit tags. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_encrypt_is_tag_96_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when encrypt tasks take 128-bit tags. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_encrypt_is_tag_128_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when encrypt tasks take keys of this type. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_encrypt_is_key_type_supported(const struct doca_devinfo *devinfo,
						enum doca_aes_gcm_key_type key_type);

/** The largest source or destination of a encrypt task, in bytes. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_encrypt_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** The longest buffer list a encrypt task's source or destination may be (1: single buffers). */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_encrypt_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** Configures the instance's encrypt tasks: their callbacks and how many may exist (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_task_encrypt_set_conf(struct doca_aes_gcm *aes_gcm,
				doca_aes_gcm_task_encrypt_completion_cb_t task_completion_cb,
				doca_aes_gcm_task_encrypt_completion_cb_t task_error_cb,
				uint32_t num_tasks);

/** Takes a encrypt task from the instance's pool: the IV's iv_length bytes (0 to 12) are copied; tag_size is 12 or 16. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_task_encrypt_alloc_init(struct doca_aes_gcm *aes_gcm,
				struct doca_buf const *src_buff,
				struct doca_buf *dst_buff,
				struct doca_aes_gcm_key *key,
				const uint8_t *iv,
				uint32_t iv_length,
				uint32_t tag_size,
				uint32_t aad_size,
				union doca_data user_data,
				struct doca_aes_gcm_task_encrypt **task);

/** The task as a doca_task (submit, free, user data, status). */
DOCA_EXPERIMENTAL
struct doca_task *doca_aes_gcm_task_encrypt_as_task(struct doca_aes_gcm_task_encrypt *task);

/** Sets the source. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_encrypt_set_src(struct doca_aes_gcm_task_encrypt *task, struct doca_buf const *src_buff);

/** The source. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_aes_gcm_task_encrypt_get_src(const struct doca_aes_gcm_task_encrypt *task);

/** Sets the destination. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_encrypt_set_dst(struct doca_aes_gcm_task_encrypt *task, struct doca_buf *dst_buff);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_aes_gcm_task_encrypt_get_dst(const struct doca_aes_gcm_task_encrypt *task);

/** Sets the key. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_encrypt_set_key(struct doca_aes_gcm_task_encrypt *task, struct doca_aes_gcm_key *key);

/** The key. */
DOCA_EXPERIMENTAL
struct doca_aes_gcm_key *doca_aes_gcm_task_encrypt_get_key(const struct doca_aes_gcm_task_encrypt *task);

/** Sets the IV (its bytes are copied). */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_encrypt_set_iv(struct doca_aes_gcm_task_encrypt *task, const uint8_t *iv, uint32_t iv_length);

/** The IV the task keeps (valid while the task is) and its length. */
DOCA_EXPERIMENTAL
const uint8_t *doca_aes_gcm_task_encrypt_get_iv(const struct doca_aes_gcm_task_encrypt *task, uint32_t *iv_length);

/** Sets the tag size (12 or 16 bytes). */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_encrypt_set_tag_size(struct doca_aes_gcm_task_encrypt *task, uint32_t tag_size);

/** The tag size in bytes. */
DOCA_EXPERIMENTAL
uint32_t doca_aes_gcm_task_encrypt_get_tag_size(const struct doca_aes_gcm_task_encrypt *task);

/** Sets the size of the additional authenticated data at the start of the source. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_encrypt_set_aad_size(struct doca_aes_gcm_task_encrypt *task, uint32_t aad_size);

/** The additional authenticated data's size in bytes. */
DOCA_EXPERIMENTAL
uint32_t doca_aes_gcm_task_encrypt_get_aad_size(const struct doca_aes_gcm_task_encrypt *task);

/* ---- decrypt ---- */

/** An AES-GCM decrypt task. */
struct doca_aes_gcm_task_decrypt;

/** The callback of a completed (or failed) decrypt task. */
typedef void (*doca_aes_gcm_task_decrypt_completion_cb_t)(struct doca_aes_gcm_task_decrypt *task, union doca_data task_user_data,
					  union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs decrypt tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_decrypt_is_supported(const struct doca_devinfo *devinfo);

/** The longest IV of a decrypt task, in bytes (12). */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_decrypt_get_max_iv_len(const struct doca_devinfo *devinfo, uint32_t *max_iv_len);

/** DOCA_SUCCESS when decrypt tasks take 96-bit tags. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_decrypt_is_tag_96_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when decrypt tasks take 128-bit tags. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_decrypt_is_tag_128_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when decrypt tasks take keys of this type. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_decrypt_is_key_type_supported(const struct doca_devinfo *devinfo,
						enum doca_aes_gcm_key_type key_type);

/** The largest source or destination of a decrypt task, in bytes. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_decrypt_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** The longest buffer list a decrypt task's source or destination may be (1: single buffers). */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_cap_task_decrypt_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** Configures the instance's decrypt tasks: their callbacks and how many may exist (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_task_decrypt_set_conf(struct doca_aes_gcm *aes_gcm,
				doca_aes_gcm_task_decrypt_completion_cb_t task_completion_cb,
				doca_aes_gcm_task_decrypt_completion_cb_t task_error_cb,
				uint32_t num_tasks);

/** Takes a decrypt task from the instance's pool: the IV's iv_length bytes (0 to 12) are copied; tag_size is 12 or 16. */
DOCA_EXPERIMENTAL
doca_error_t doca_aes_gcm_task_decrypt_alloc_init(struct doca_aes_gcm *aes_gcm,
				struct doca_buf const *src_buff,
				struct doca_buf *dst_buff,
				struct doca_aes_gcm_key *key,
				const uint8_t *iv,
				uint32_t iv_length,
				uint32_t tag_size,
				uint32_t aad_size,
				union doca_data user_data,
				struct doca_aes_gcm_task_decrypt **task);

/** The task as a doca_task (submit, free, user data, status). */
DOCA_EXPERIMENTAL
struct doca_task *doca_aes_gcm_task_decrypt_as_task(struct doca_aes_gcm_task_decrypt *task);

/** Sets the source. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_decrypt_set_src(struct doca_aes_gcm_task_decrypt *task, struct doca_buf const *src_buff);

/** The source. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_aes_gcm_task_decrypt_get_src(const struct doca_aes_gcm_task_decrypt *task);

/** Sets the destination. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_decrypt_set_dst(struct doca_aes_gcm_task_decrypt *task, struct doca_buf *dst_buff);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_aes_gcm_task_decrypt_get_dst(const struct doca_aes_gcm_task_decrypt *task);

/** Sets the key. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_decrypt_set_key(struct doca_aes_gcm_task_decrypt *task, struct doca_aes_gcm_key *key);

/** The key. */
DOCA_EXPERIMENTAL
struct doca_aes_gcm_key *doca_aes_gcm_task_decrypt_get_key(const struct doca_aes_gcm_task_decrypt *task);

/** Sets the IV (its bytes are copied). */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_decrypt_set_iv(struct doca_aes_gcm_task_decrypt *task, const uint8_t *iv, uint32_t iv_length);

/** The IV the task keeps (valid while the task is) and its length. */
DOCA_EXPERIMENTAL
const uint8_t *doca_aes_gcm_task_decrypt_get_iv(const struct doca_aes_gcm_task_decrypt *task, uint32_t *iv_length);

/** Sets the tag size (12 or 16 bytes). */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_decrypt_set_tag_size(struct doca_aes_gcm_task_decrypt *task, uint32_t tag_size);

/** The tag size in bytes. */
DOCA_EXPERIMENTAL
uint32_t doca_aes_gcm_task_decrypt_get_tag_size(const struct doca_aes_gcm_task_decrypt *task);

/** Sets the size of the additional authenticated data at the start of the source. */
DOCA_EXPERIMENTAL
void doca_aes_gcm_task_decrypt_set_aad_size(struct doca_aes_gcm_task_decrypt *task, uint32_t aad_size);

/** The additional authenticated data's size in bytes. */
DOCA_EXPERIMENTAL
uint32_t doca_aes_gcm_task_decrypt_get_aad_size(const struct doca_aes_gcm_task_decrypt *task);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_AES_GCM_H_ */
