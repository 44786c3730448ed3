/* AES-GCM tasks on a progress engine, as DOCA's samples use them, checked against
 * OpenSSL's EVP both ways: what a task encrypts OpenSSL decrypts and authenticates, and
 * what OpenSSL encrypts a task decrypts; both key sizes, both tag sizes, additional
 * data, a short IV (padded with zeros), buffer lists; the task getters and setters;
 * tampered ciphertext, tag and additional data, a wrong key: the decrypt fails with
 * IO_FAILED, the destination keeps its length and holds no plaintext (and the context,
 * stopped by the failure as on the hardware, starts again); a key destroyed while the
 * instance lives, and the instance refusing to go while a key is left. */
#include <doca_aes_gcm.h>
#include <openssl/evp.h>

#include "common3.h"

#define MEM (4u << 20)
#define TEXT 5000

struct counter {
	int done, failed;
	doca_error_t last;
};

static void enc_ok(struct doca_aes_gcm_task_encrypt *t, union doca_data u, union doca_data c)
{
	(void)t;
	(void)u;
	((struct counter *)c.ptr)->done++;
}

static void enc_err(struct doca_aes_gcm_task_encrypt *t, union doca_data u, union doca_data c)
{
	struct counter *n = c.ptr;

	(void)u;
	n->last = doca_task_get_status(doca_aes_gcm_task_encrypt_as_task(t));
	n->failed++;
}

static void dec_ok(struct doca_aes_gcm_task_decrypt *t, union doca_data u, union doca_data c)
{
	(void)t;
	(void)u;
	((struct counter *)c.ptr)->done++;
}

static void dec_err(struct doca_aes_gcm_task_decrypt *t, union doca_data u, union doca_data c)
{
	struct counter *n = c.ptr;

	(void)u;
	n->last = doca_task_get_status(doca_aes_gcm_task_decrypt_as_task(t));
	n->failed++;
}

struct env {
	struct doca_dev *dev;
	struct doca_pe *pe;
	struct doca_aes_gcm *aes;
	struct doca_ctx *ctx;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t *mem;
	struct counter n;
};

/* Progresses until one more task ended: 1 when it succeeded. */
static int wait_one(struct env *e)
{
	int before = e->n.done + e->n.failed, failed = e->n.failed;
	long spins = 0;

	while (e->n.done + e->n.failed == before) {
		(void)doca_pe_progress(e->pe);
		ASSERT(++spins < 100000000L);
	}
	return e->n.failed == failed;
}

/* After a failed task (freed): the context stops; start it again. */
static void restart(struct env *e)
{
	enum doca_ctx_states st;
	long spins = 0;

	do {
		(void)doca_pe_progress(e->pe);
		CHECK(doca_ctx_get_state(e->ctx, &st));
		ASSERT(++spins < 100000000L);
	} while (st != DOCA_CTX_STATE_IDLE);
	CHECK(doca_ctx_start(e->ctx));
}

static const EVP_CIPHER *cipher(size_t key_len)
{
	return key_len == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
}

/* OpenSSL: aad || pt -> aad || ct || tag, with a 12-byte IV. */
static size_t ossl_seal(const uint8_t *key, size_t klen, const uint8_t *iv, size_t tag, const uint8_t *in, size_t n,
			size_t aad, uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l = 0, f = 0;

	ASSERT(c != NULL);
	ASSERT(EVP_EncryptInit_ex(c, cipher(klen), NULL, NULL, NULL) == 1);
	ASSERT(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1);
	ASSERT(EVP_EncryptInit_ex(c, NULL, NULL, key, iv) == 1);
	if (aad > 0)
		ASSERT(EVP_EncryptUpdate(c, NULL, &l, in, (int)aad) == 1);
	memcpy(out, in, aad);
	ASSERT(EVP_EncryptUpdate(c, out + aad, &l, in + aad, (int)(n - aad)) == 1);
	ASSERT(EVP_EncryptFinal_ex(c, out + aad + l, &f) == 1);
	ASSERT(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, (int)tag, out + n) == 1);
	EVP_CIPHER_CTX_free(c);
	return n + tag;
}

/* OpenSSL: aad || ct || tag -> pt; 1 when the tag matches. */
static int ossl_open(const uint8_t *key, size_t klen, const uint8_t *iv, size_t tag, const uint8_t *in, size_t n,
		     size_t aad, uint8_t *pt)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l = 0, f = 0, ok;

	ASSERT(c != NULL);
	ASSERT(EVP_DecryptInit_ex(c, cipher(klen), NULL, NULL, NULL) == 1);
	ASSERT(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1);
	ASSERT(EVP_DecryptInit_ex(c, NULL, NULL, key, iv) == 1);
	if (aad > 0)
		ASSERT(EVP_DecryptUpdate(c, NULL, &l, in, (int)aad) == 1);
	ASSERT(EVP_DecryptUpdate(c, pt, &l, in + aad, (int)(n - aad - tag)) == 1);
	ASSERT(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, (int)tag, (void *)(uintptr_t)(in + n - tag)) == 1);
	ok = EVP_DecryptFinal_ex(c, pt + l, &f);
	EVP_CIPHER_CTX_free(c);
	return ok == 1;
}

static struct doca_buf *data_buf(struct env *e, uint8_t *at, size_t n)
{
	struct doca_buf *b;

	CHECK(doca_buf_inventory_buf_get_by_data(e->inv, e->mmap, at, n, &b));
	return b;
}

static struct doca_buf *room_buf(struct env *e, uint8_t *at, size_t n)
{
	struct doca_buf *b;

	CHECK(doca_buf_inventory_buf_get_by_addr(e->inv, e->mmap, at, n, &b));
	return b;
}

static size_t data_len(struct doca_buf *b)
{
	size_t n;

	CHECK(doca_buf_get_data_len(b, &n));
	return n;
}

/* Encrypts src (n bytes) into dst with a task; returns the output length. */
static size_t encrypt(struct env *e, struct doca_aes_gcm_key *key, const uint8_t *iv, uint32_t iv_len, uint32_t tag,
		      uint32_t aad, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_aes_gcm_task_encrypt *t;
	union doca_data ud = {.u64 = 1};
	const uint8_t *kept;
	uint32_t kept_len = 99;
	size_t len;

	CHECK(doca_aes_gcm_task_encrypt_alloc_init(e->aes, src, dst, key, iv, iv_len, tag, aad, ud, &t));
	ASSERT(doca_aes_gcm_task_encrypt_get_key(t) == key);
	ASSERT(doca_aes_gcm_task_encrypt_get_tag_size(t) == tag && doca_aes_gcm_task_encrypt_get_aad_size(t) == aad);
	kept = doca_aes_gcm_task_encrypt_get_iv(t, &kept_len);
	ASSERT(kept_len == iv_len && memcmp(kept, iv, iv_len) == 0);
	CHECK(doca_task_submit(doca_aes_gcm_task_encrypt_as_task(t)));
	ASSERT(wait_one(e));
	len = data_len(dst);
	doca_task_free(doca_aes_gcm_task_encrypt_as_task(t));
	return len;
}

/* Decrypts with a task: DOCA_SUCCESS, or the task's error (the context restarted). */
static doca_error_t decrypt(struct env *e, struct doca_aes_gcm_key *key, const uint8_t *iv, uint32_t tag,
			    uint32_t aad, struct doca_buf *src, struct doca_buf *dst)
{
	struct doca_aes_gcm_task_decrypt *t;
	union doca_data ud = {.u64 = 2};
	uint8_t other_iv[12] = {9};
	doca_error_t r = DOCA_SUCCESS;

	/* Allocated with another IV, then set: the setter's bytes count. */
	CHECK(doca_aes_gcm_task_decrypt_alloc_init(e->aes, src, dst, key, other_iv, 12, 16, 0, ud, &t));
	doca_aes_gcm_task_decrypt_set_iv(t, iv, 12);
	doca_aes_gcm_task_decrypt_set_tag_size(t, tag);
	doca_aes_gcm_task_decrypt_set_aad_size(t, aad);
	CHECK(doca_task_submit(doca_aes_gcm_task_decrypt_as_task(t)));
	if (!wait_one(e))
		r = e->n.last;
	doca_task_free(doca_aes_gcm_task_decrypt_as_task(t));
	if (r != DOCA_SUCCESS)
		restart(e);
	return r;
}

static void checks(struct env *e, size_t klen, uint32_t tag, uint32_t aad)
{
	uint8_t raw[32], iv[12], *text = e->mem, *sealed = e->mem + (1u << 20), *ours = e->mem + (2u << 20),
				 *back = e->mem + (3u << 20);
	struct doca_aes_gcm_key *key, *wrong;
	struct doca_buf *src, *dst;
	size_t n, i;

	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(i * 7 + klen + tag);
	for (i = 0; i < sizeof(iv); i++)
		iv[i] = (uint8_t)(0xA0 + i);
	CHECK(doca_aes_gcm_key_create(e->aes, raw, klen == 16 ? DOCA_AES_GCM_KEY_128 : DOCA_AES_GCM_KEY_256, &key));

	/* Ours -> OpenSSL. */
	src = data_buf(e, text, TEXT);
	dst = room_buf(e, ours, 2 * TEXT);
	n = encrypt(e, key, iv, 12, tag, aad, src, dst);
	ASSERT(n == TEXT + tag);
	ASSERT(ossl_open(raw, klen, iv, tag, ours, n, aad, back) && memcmp(back, text + aad, TEXT - aad) == 0);
	ASSERT(memcmp(ours, text, aad) == 0);
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));

	/* OpenSSL -> ours: the same bytes, and they decrypt. */
	ASSERT(ossl_seal(raw, klen, iv, tag, text, TEXT, aad, sealed) == n && memcmp(sealed, ours, n) == 0);
	src = data_buf(e, sealed, n);
	dst = room_buf(e, back, 2 * TEXT);
	CHECK(decrypt(e, key, iv, tag, aad, src, dst));
	ASSERT(data_len(dst) == TEXT && memcmp(back, text, TEXT) == 0);
	CHECK(doca_buf_dec_refcount(dst, NULL));

	/* Tampered: a ciphertext byte, a tag byte, an additional-data byte, a wrong key. */
	for (i = 0; i < 4; i++) {
		size_t at = i == 0 ? aad + 100 : i == 1 ? n - 1 : 0;
		struct doca_aes_gcm_key *k = key;

		if (i == 2 && aad == 0)
			continue;
		if (i == 3) {
			raw[0] ^= 1;
			CHECK(doca_aes_gcm_key_create(e->aes, raw,
						      klen == 16 ? DOCA_AES_GCM_KEY_128 : DOCA_AES_GCM_KEY_256, &wrong));
			raw[0] ^= 1;
			k = wrong;
		} else {
			sealed[at] ^= 0x40;
		}
		memset(back, 0xEE, 2 * TEXT);
		dst = room_buf(e, back, 2 * TEXT);
		EXPECT_ERR(decrypt(e, k, iv, tag, aad, src, dst), DOCA_ERROR_IO_FAILED);
		ASSERT(data_len(dst) == 0);
		for (size_t j = 0; j < TEXT; j++)
			ASSERT(back[j] == 0 || back[j] == 0xEE); /* no plaintext */
		ASSERT(memcmp(back + aad, text + aad, 64) != 0);
		CHECK(doca_buf_dec_refcount(dst, NULL));
		if (i == 3)
			CHECK(doca_aes_gcm_key_destroy(wrong));
		else
			sealed[at] ^= 0x40;
	}
	CHECK(doca_buf_dec_refcount(src, NULL));

	/* A short IV is padded with zeros: the same result as the 12-byte IV 01 02 03 0...0. */
	{
		uint8_t short_iv[3] = {1, 2, 3}, full_iv[12] = {1, 2, 3};

		src = data_buf(e, text, TEXT);
		dst = room_buf(e, ours, 2 * TEXT);
		n = encrypt(e, key, short_iv, 3, tag, aad, src, dst);
		ASSERT(ossl_open(raw, klen, full_iv, tag, ours, n, aad, back) &&
		       memcmp(back, text + aad, TEXT - aad) == 0);
		CHECK(doca_buf_dec_refcount(src, NULL));
		CHECK(doca_buf_dec_refcount(dst, NULL));
	}

	/* Lists: the source in three pieces, the destination in two. */
	{
		struct doca_buf *s2, *s3, *d2;

		src = data_buf(e, text, 1000);
		s2 = data_buf(e, text + 1000, 1);
		s3 = data_buf(e, text + 1001, TEXT - 1001);
		CHECK(doca_buf_chain_list(src, s2));
		CHECK(doca_buf_chain_list(src, s3));
		dst = room_buf(e, ours, 3000);
		d2 = room_buf(e, ours + 4096, 3000);
		CHECK(doca_buf_chain_list(dst, d2));
		n = encrypt(e, key, iv, 12, tag, aad, src, dst);
		ASSERT(n == 3000 && data_len(d2) == TEXT + tag - 3000);
		memcpy(back, ours, 3000);
		memcpy(back + 3000, ours + 4096, TEXT + tag - 3000);
		ASSERT(memcmp(back, sealed, TEXT + tag) == 0);
		CHECK(doca_buf_dec_refcount(src, NULL));
		CHECK(doca_buf_dec_refcount(dst, NULL));
	}
	CHECK(doca_aes_gcm_key_destroy(key));
}

int main(void)
{
	struct env e;
	struct doca_devinfo **list;
	struct doca_aes_gcm_key *key;
	uint32_t n = 0, i, v;
	uint64_t max_size;
	union doca_data ud;
	enum doca_ctx_states st;
	long spins = 0;
	doca_error_t r;
	uint8_t raw[32] = {0};

	memset(&e, 0, sizeof(e));
	CHECK(doca_devinfo_create_list(&list, &n));
	for (i = 0; i < n && e.dev == NULL; i++)
		if (doca_aes_gcm_cap_task_encrypt_is_supported(list[i]) == DOCA_SUCCESS &&
		    doca_aes_gcm_cap_task_decrypt_is_supported(list[i]) == DOCA_SUCCESS)
			CHECK(doca_dev_open(list[i], &e.dev));
	CHECK(doca_devinfo_destroy_list(list));
	ASSERT(e.dev != NULL);
	CHECK(doca_aes_gcm_cap_task_encrypt_get_max_iv_len(doca_dev_as_devinfo(e.dev), &v));
	ASSERT(v == 12);
	CHECK(doca_aes_gcm_cap_task_decrypt_is_tag_96_supported(doca_dev_as_devinfo(e.dev)));
	CHECK(doca_aes_gcm_cap_task_decrypt_is_tag_128_supported(doca_dev_as_devinfo(e.dev)));
	CHECK(doca_aes_gcm_cap_task_encrypt_is_key_type_supported(doca_dev_as_devinfo(e.dev), DOCA_AES_GCM_KEY_128));
	EXPECT_ERR(doca_aes_gcm_cap_task_encrypt_is_key_type_supported(doca_dev_as_devinfo(e.dev),
								      (enum doca_aes_gcm_key_type)3),
		   DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_aes_gcm_cap_task_encrypt_get_max_buf_size(doca_dev_as_devinfo(e.dev), &max_size));
	ASSERT(max_size >= MEM);
	CHECK(doca_aes_gcm_cap_task_encrypt_get_max_list_buf_num_elem(doca_dev_as_devinfo(e.dev), &v));
	ASSERT(v >= 3);

	e.mem = aligned_alloc(4096, MEM);
	ASSERT(e.mem != NULL);
	for (i = 0; i < TEXT; i++)
		e.mem[i] = (uint8_t)(i * 131 + 17);
	CHECK(doca_mmap_create(&e.mmap));
	CHECK(doca_mmap_set_memrange(e.mmap, e.mem, MEM));
	CHECK(doca_mmap_set_permissions(e.mmap, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE));
	CHECK(doca_mmap_add_dev(e.mmap, e.dev));
	CHECK(doca_mmap_start(e.mmap));
	CHECK(doca_buf_inventory_create(64, &e.inv));
	CHECK(doca_buf_inventory_start(e.inv));
	CHECK(doca_pe_create(&e.pe));
	CHECK(doca_aes_gcm_create(e.dev, &e.aes));
	e.ctx = doca_aes_gcm_as_ctx(e.aes);
	CHECK(doca_aes_gcm_cap_get_max_num_tasks(e.aes, &v));
	ASSERT(v >= 2);
	CHECK(doca_pe_connect_ctx(e.pe, e.ctx));
	ud.ptr = &e.n;
	CHECK(doca_ctx_set_user_data(e.ctx, ud));
	CHECK(doca_aes_gcm_task_encrypt_set_conf(e.aes, enc_ok, enc_err, 2));
	CHECK(doca_aes_gcm_task_decrypt_set_conf(e.aes, dec_ok, dec_err, 2));
	CHECK(doca_ctx_start(e.ctx));

	/* Bad inputs at the C boundary. */
	EXPECT_ERR(doca_aes_gcm_key_create(e.aes, raw, (enum doca_aes_gcm_key_type)7, &key), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_aes_gcm_key_create(e.aes, NULL, DOCA_AES_GCM_KEY_128, &key), DOCA_ERROR_INVALID_VALUE);

	checks(&e, 16, 12, 0);
	checks(&e, 32, 16, 0);
	checks(&e, 32, 12, 24);
	checks(&e, 16, 16, 7);

	/* The instance does not go while a key is left. */
	CHECK(doca_aes_gcm_key_create(e.aes, raw, DOCA_AES_GCM_KEY_256, &key));
	r = doca_ctx_stop(e.ctx);
	ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
	do {
		(void)doca_pe_progress(e.pe);
		CHECK(doca_ctx_get_state(e.ctx, &st));
		ASSERT(++spins < 100000000L);
	} while (st != DOCA_CTX_STATE_IDLE);
	EXPECT_ERR(doca_aes_gcm_destroy(e.aes), DOCA_ERROR_IN_USE);
	CHECK(doca_aes_gcm_key_destroy(key));
	CHECK(doca_aes_gcm_destroy(e.aes));
	CHECK(doca_pe_destroy(e.pe));
	CHECK(doca_buf_inventory_destroy(e.inv));
	CHECK(doca_mmap_destroy(e.mmap));
	CHECK(doca_dev_close(e.dev));
	free(e.mem);
	printf("aes_gcm3: ok (%d tasks)\n", e.n.done);
	return 0;
}
