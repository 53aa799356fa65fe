/* SPDX-License-Identifier: GPL-2.0-only */
/* Between the module's objects: the LTTng probe registrations. */
#ifndef WAITPATH_KMOD_H
#define WAITPATH_KMOD_H

int waitpath_probe_register(void);
void waitpath_probe_unregister(void);
int waitpath_statedump_probe_register(void);
void waitpath_statedump_probe_unregister(void);

#endif
