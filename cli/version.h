/* --version, the same in every tool: the program, the commit it was built
 * from, the NVRTC it runs and the NVIDIA driver when one is installed. It
 * opens no GPU (so it answers on a machine without one). */
#ifndef VPT_CLI_VERSION_H
#define VPT_CLI_VERSION_H

#include <stdio.h>

/* Prints "<prog> (vptune) commit <c>\nNVRTC <v> (<build>)\ndriver <r>\n". */
void vpt_print_version(FILE *fp, const char *prog);

/* 1 after printing the version when argv holds --version, else 0. */
int vpt_handle_version(int argc, char **argv, const char *prog);

#endif
