/* Reed-Solomon erasure coding over GF(2^8), polynomial 0x11D (ISA-L's erasure_code.h).
 *
 * An encoding matrix a (rows x k, row-major) is expanded by ec_init_tables into
 * 32 * k * rows bytes of tables; coefficient (r, j) lies at g_tbls + 32 * (k * r + j).
 * ec_encode_data then computes coding[r] = sum over j of a(r, j) * data[j]. */
#ifndef _ERASURE_CODE_H_
#define _ERASURE_CODE_H_

#include "gf_vect_mul.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Expands k * rows coefficients into g_tbls (32 * k * rows bytes). */
void ec_init_tables(int k, int rows, unsigned char *a, unsigned char *gftbls);
void ec_init_tables_base(int k, int rows, unsigned char *a, unsigned char *gftbls);

/* coding[r] (rows blocks) from data[j] (k blocks), each len bytes. */
void ec_encode_data(int len, int k, int rows, unsigned char *gftbls, unsigned char **data,
                    unsigned char **coding);
/* Adds data block vec_i's share: coding[r] ^= a(r, vec_i) * data. */
void ec_encode_data_update(int len, int k, int rows, int vec_i, unsigned char *gftbls,
                           unsigned char *data, unsigned char **coding);

/* dest = sum over j of c(j) * src[j]; len >= 32 (16 for _sse and _avx, 64 for _avx512). */
void gf_vect_dot_prod(int len, int vlen, unsigned char *gftbls, unsigned char **src,
                      unsigned char *dest);
/* dest ^= c(vec_i) * src; len >= 32 (16 for _sse and _avx, 64 for _avx512). */
void gf_vect_mad(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
                 unsigned char *dest);

/* Generator matrices (m rows of k): the identity on top, then Vandermonde-style rows
 * (gf_gen_rs_matrix) or Cauchy rows 1 / (i ^ j) (gf_gen_cauchy1_matrix). */
void gf_gen_rs_matrix(unsigned char *a, int m, int k);
void gf_gen_cauchy1_matrix(unsigned char *a, int m, int k);

/* out_mat = in_mat^-1 (n x n); in_mat is reduced in place. 0, or -1 when singular. */
int gf_invert_matrix(unsigned char *in_mat, unsigned char *out_mat, const int n);

unsigned char gf_mul(unsigned char a, unsigned char b);
unsigned char gf_inv(unsigned char a);

/* The names of ISA-L's per-instruction-set functions, all with the semantics above. */
void ec_encode_data_base(int len, int k, int rows, unsigned char *gftbls, unsigned char **data,
        unsigned char **coding);
void ec_encode_data_update_base(int len, int k, int rows, int vec_i, unsigned char *gftbls,
        unsigned char *data, unsigned char **coding);
void gf_vect_dot_prod_base(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char *dest);
void gf_vect_mad_base(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char *dest);
void ec_encode_data_sse(int len, int k, int rows, unsigned char *gftbls, unsigned char **data,
        unsigned char **coding);
void ec_encode_data_update_sse(int len, int k, int rows, int vec_i, unsigned char *gftbls,
        unsigned char *data, unsigned char **coding);
void gf_vect_dot_prod_sse(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char *dest);
void gf_vect_mad_sse(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char *dest);
void ec_encode_data_avx(int len, int k, int rows, unsigned char *gftbls, unsigned char **data,
        unsigned char **coding);
void ec_encode_data_update_avx(int len, int k, int rows, int vec_i, unsigned char *gftbls,
        unsigned char *data, unsigned char **coding);
void gf_vect_dot_prod_avx(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char *dest);
void gf_vect_mad_avx(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char *dest);
void ec_encode_data_avx2(int len, int k, int rows, unsigned char *gftbls, unsigned char **data,
        unsigned char **coding);
void ec_encode_data_update_avx2(int len, int k, int rows, int vec_i, unsigned char *gftbls,
        unsigned char *data, unsigned char **coding);
void gf_vect_dot_prod_avx2(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char *dest);
void gf_vect_mad_avx2(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char *dest);
void ec_encode_data_avx512(int len, int k, int rows, unsigned char *gftbls, unsigned char **data,
        unsigned char **coding);
void ec_encode_data_update_avx512(int len, int k, int rows, int vec_i, unsigned char *gftbls,
        unsigned char *data, unsigned char **coding);
void gf_vect_dot_prod_avx512(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char *dest);
void gf_vect_mad_avx512(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char *dest);
void gf_2vect_dot_prod_sse(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_2vect_mad_sse(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_2vect_dot_prod_avx(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_2vect_mad_avx(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_2vect_dot_prod_avx2(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_2vect_mad_avx2(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_2vect_dot_prod_avx512(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_2vect_mad_avx512(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_3vect_dot_prod_sse(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_3vect_mad_sse(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_3vect_dot_prod_avx(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_3vect_mad_avx(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_3vect_dot_prod_avx2(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_3vect_mad_avx2(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_3vect_dot_prod_avx512(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_3vect_mad_avx512(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_4vect_dot_prod_sse(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_4vect_mad_sse(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_4vect_dot_prod_avx(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_4vect_mad_avx(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_4vect_dot_prod_avx2(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_4vect_mad_avx2(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_4vect_dot_prod_avx512(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_4vect_mad_avx512(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_5vect_dot_prod_sse(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_5vect_mad_sse(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_5vect_dot_prod_avx(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_5vect_mad_avx(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_5vect_dot_prod_avx2(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_5vect_mad_avx2(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_5vect_dot_prod_avx512(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_5vect_mad_avx512(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_6vect_dot_prod_sse(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_6vect_mad_sse(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_6vect_dot_prod_avx(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_6vect_mad_avx(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_6vect_dot_prod_avx2(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_6vect_mad_avx2(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);
void gf_6vect_dot_prod_avx512(int len, int vlen, unsigned char *gftbls, unsigned char **src,
        unsigned char **dest);
void gf_6vect_mad_avx512(int len, int vec, int vec_i, unsigned char *gftbls, unsigned char *src,
        unsigned char **dest);

#ifdef __cplusplus
}
#endif
#endif
