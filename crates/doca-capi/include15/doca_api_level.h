/*
 * doca_api_level.h of DOCA 1.5: the headers beside it (DOCA 2.2's) add the 1.5
 * declarations (struct doca_pci_bdf, enum doca_dev_rep_filter, doca_mmap_populate,
 * doca_mmap_export, ...) and describe version 1.5.
 */
#ifndef DOCA_API_LEVEL_H_
#define DOCA_API_LEVEL_H_

/** The headers declare DOCA 1.5. */
#define DOCA_API_1_5 1

#endif /* DOCA_API_LEVEL_H_ */
