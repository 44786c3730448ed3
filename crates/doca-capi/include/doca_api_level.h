/*
 * doca_api_level.h: which DOCA API the headers declare. This one (DOCA 2.2) defines
 * nothing; the copy in include/doca-1.5/, found first by DOCA 1.5 programs (pkg-config
 * modules under lib/pkgconfig/doca-1.5), defines DOCA_API_1_5, which adds the 1.5
 * declarations to these headers.
 */
#ifndef DOCA_API_LEVEL_H_
#define DOCA_API_LEVEL_H_

#endif /* DOCA_API_LEVEL_H_ */
