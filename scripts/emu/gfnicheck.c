/* Checks the emulated CPU's GF2P8AFFINEQB in every encoding the codec's kernels can use
 * (legacy SSE, VEX 128 and 256, EVEX 256 and 512) against a plain model of the
 * instruction, before the codec's own tests run on that CPU: a wrong emulator must not
 * be mistaken for a wrong kernel. Prints "GF <encoding>: ok" or the first wrong bytes;
 * the exit status is the number of encodings that are wrong. */
#include <immintrin.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
static volatile __mmask32 k32v = 0xffffffffu;
#define k32 ((__mmask32)k32v)

static uint8_t ref1(uint64_t m, uint8_t x) {
    uint8_t y = 0;
    for (int i = 0; i < 8; i++) {
        uint8_t row = (uint8_t)(m >> (8 * (7 - i)));
        if (__builtin_popcount(row & x) & 1) y |= 1 << i;
    }
    return y;
}
static uint64_t s = 88172645463325252ull;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }

__attribute__((target("sse2,gfni"), noinline)) static void f_sse(const uint8_t *x, const uint64_t *m, uint8_t *y) {
    __m128i a; __m128i b;
    memcpy(&a, x, 16); memcpy(&b, m, 16);
    __asm__("gf2p8affineqb $0, %1, %0" : "+x"(a) : "x"(b));
    memcpy(y, &a, 16);
}
__attribute__((target("avx,gfni"), noinline)) static void f_vex128(const uint8_t *x, const uint64_t *m, uint8_t *y) {
    __m128i a = _mm_loadu_si128((const void *)x), b = _mm_loadu_si128((const void *)m);
    _mm_storeu_si128((void *)y, _mm_gf2p8affine_epi64_epi8(a, b, 0));
}
__attribute__((target("avx,gfni"), noinline)) static void f_vex256(const uint8_t *x, const uint64_t *m, uint8_t *y) {
    __m256i a = _mm256_loadu_si256((const void *)x), b = _mm256_loadu_si256((const void *)m);
    __asm__("vgf2p8affineqb $0, %1, %0, %0" : "+x"(a) : "x"(b));
    _mm256_storeu_si256((void *)y, a);
}
__attribute__((target("avx512f,avx512bw,avx512vl,gfni"), noinline)) static void f_evex256(const uint8_t *x, const uint64_t *m, uint8_t *y) {
    __m256i a = _mm256_loadu_si256((const void *)x), b = _mm256_loadu_si256((const void *)m);
    __asm__("vgf2p8affineqb $0, %1, %0, %0%{%2%}%{z%}" : "+v"(a) : "v"(b), "Yk"(k32));
    _mm256_storeu_si256((void *)y, a);
}
__attribute__((target("avx512f,avx512bw,gfni"), noinline)) static void f_evex512(const uint8_t *x, const uint64_t *m, uint8_t *y) {
    __m512i a = _mm512_loadu_si512((const void *)x), b = _mm512_loadu_si512((const void *)m);
    _mm512_storeu_si512((void *)y, _mm512_gf2p8affine_epi64_epi8(a, b, 0));
}

typedef void (*fn)(const uint8_t *, const uint64_t *, uint8_t *);
int main(void) {
    struct { const char *name; fn f; int bytes; } t[] = {
        {"sse128", f_sse, 16}, {"vex128", f_vex128, 16}, {"vex256", f_vex256, 32},
        {"evex256", f_evex256, 32}, {"evex512", f_evex512, 64},
    };
    int bad_total = 0;
    for (unsigned k = 0; k < sizeof t / sizeof t[0]; k++) {
        int bad = 0, shown = 0;
        for (int it = 0; it < 2000; it++) {
            uint8_t x[64], y[64]; uint64_t m[8];
            for (int i = 0; i < 64; i++) x[i] = (uint8_t)rnd();
            for (int i = 0; i < 8; i++) m[i] = rnd();
            if (it & 1) for (int i = 1; i < 8; i++) m[i] = m[0];
            t[k].f(x, m, y);
            for (int b = 0; b < t[k].bytes; b++) {
                uint8_t want = ref1(m[b / 8], x[b]);
                if (y[b] != want) {
                    bad++;
                    if (shown++ < 4)
                        printf("GF %s it=%d byte=%d x=%02x m=%016llx got=%02x want=%02x\n", t[k].name, it, b, x[b],
                               (unsigned long long)m[b / 8], y[b], want);
                }
            }
        }
        printf("GF %s: %s (%d wrong bytes)\n", t[k].name, bad ? "WRONG" : "ok", bad);
        bad_total += bad != 0;
    }
    return bad_total;
}
