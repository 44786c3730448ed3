/* Multiplication of a vector by a constant in GF(2^8), polynomial 0x11D (ISA-L's
 * gf_vect_mul.h). A constant c is used through its 32-byte table: c times each low
 * nibble value 0..15, then c times each high nibble value 0x00..0xf0. */
#ifndef _GF_VECT_MUL_H
#define _GF_VECT_MUL_H

#ifdef __cplusplus
extern "C" {
#endif

/* dest = c * src over len bytes, with gftbl from gf_vect_mul_init(c). len must be a
 * multiple of 32; src may equal dest. Returns 0, or nonzero (and does nothing) when len
 * is not a multiple of 32. */
int gf_vect_mul(int len, unsigned char *gftbl, void *src, void *dest);
int gf_vect_mul_sse(int len, unsigned char *gftbl, void *src, void *dest);
int gf_vect_mul_avx(int len, unsigned char *gftbl, void *src, void *dest);
int gf_vect_mul_base(int len, unsigned char *a, unsigned char *src, unsigned char *dest);

/* Writes the 32-byte table of c. */
void gf_vect_mul_init(unsigned char c, unsigned char *gftbl);
void gf_vect_mul_init_base(unsigned char c, unsigned char *gftbl);

#ifdef __cplusplus
}
#endif
#endif
