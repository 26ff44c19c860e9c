/* Lustre layouts (lustre.c), called by the layers. */
#ifndef IOTUNER_LUSTRE_H
#define IOTUNER_LUSTRE_H

#include "phase.h"

/* Lustre (lustre.c): prepare the layout of a file about to be created.
 * is_root: this process creates it; the caller synchronizes others. */
void iot_lustre_prepare(iot_phase *ph, const char *path, int truncating, int is_root);
int iot_lustre_wanted(const iot_phase *ph);

#endif
