/*
 * doca_buf.h: buffers, a window on a memory map.
 *
 *   head                 data              data + data_len        head + len
 *    |---- headroom ------|====== data ======|------ tailroom ------|
 *
 * Buffers are reference counted: doca_buf_dec_refcount releases one reference, and the
 * last one returns the buffer to its inventory or pool. Buffers chain into lists
 * (scatter-gather) that jobs accept as one source or destination.
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;

/** Optional features of buffers in an inventory. */
enum doca_buf_extension {
	DOCA_BUF_EXTENSION_NONE = 0,
};

/** Takes one more reference; refcount (may be NULL) gets the count before the call. */
DOCA_STABLE
doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount);

/** Releases one reference; refcount (may be NULL) gets the count before the call. */
DOCA_STABLE
doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);

/** The reference count. */
DOCA_STABLE
doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount);

/** The length from head to the end of the buffer. */
DOCA_STABLE
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);

/** The start of the buffer. */
DOCA_STABLE
doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head);

/** The length of the data. */
DOCA_STABLE
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);

/** The start of the data. */
DOCA_STABLE
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);

/** Sets the data window; it must lie inside the buffer. */
DOCA_STABLE
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);

/**
 * Sets the data length, the data address staying (a section past the buffer's end is
 * refused with DOCA_ERROR_INVALID_VALUE).
 */
DOCA_STABLE
doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len);

/** Empties the data window (data_len 0, data at head). */
DOCA_STABLE
doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);

/** The next element of the list (NULL after the last). */
DOCA_STABLE
doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf);

/** The last element of the list. */
DOCA_STABLE
doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf);

/** Whether buf is the last element of its list. */
DOCA_STABLE
doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last);

/** Whether buf is the first element of its list. */
DOCA_STABLE
doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first);

/** Whether buf belongs to a list of more than one element. */
DOCA_STABLE
doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list);

/** Elements in the list that starts at buf. */
DOCA_STABLE
doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements);

/** Appends list2 (its head) to the end of list1 (its head). */
DOCA_STABLE
doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);

/**
 * doca_buf_chain_list where list1's last element is named (list1_tail must be it:
 * DOCA_ERROR_INVALID_VALUE otherwise).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_chain_list_tail(struct doca_buf *list1_head, struct doca_buf *list1_tail,
				      struct doca_buf *list2);

/** Cuts list1 before element list2, which heads the second list. */
DOCA_STABLE
doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H_ */
