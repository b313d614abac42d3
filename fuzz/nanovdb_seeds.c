/* Writes the seed corpus of the volume_nanovdb fuzz target (make
 * fuzz-corpus): NanoVDB files of small clouds built by
 * physics/sparse_grid.c, laid out as nanovdb::io writes them (segment
 * header, grid metadata and name, grid buffer): uncompressed, ZIP, and two
 * segments. Usage: nanovdb_seeds DIR */
#include "physics/sparse_grid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void segment(FILE *fp, const VptSparseGrid *g, const char *name, int zip)
{
    const uint64_t magic = 0x304244566f6e614eULL;
    const uint32_t version = (32u << 21) | (4u << 10) | 2u;
    const uint16_t count = 1, codec = (uint16_t)zip;
    fwrite(&magic, 8, 1, fp);
    fwrite(&version, 4, 1, fp);
    fwrite(&count, 2, 1, fp);
    fwrite(&codec, 2, 1, fp);
    unsigned char meta[176] = {0};
    const uint64_t gs = g->size;
    const uint32_t type = 1, cls = 2, nsz = (uint32_t)strlen(name) + 1;
    memcpy(meta, &gs, 8);
    memcpy(meta + 32, &type, 4);
    memcpy(meta + 36, &cls, 4);
    memcpy(meta + 136, &nsz, 4);
    memcpy(meta + 168, &codec, 2);
    fwrite(meta, 1, sizeof meta, fp);
    fwrite(name, 1, nsz, fp);
    if (!zip) {
        fwrite(g->data, 1, g->size, fp);
        return;
    }
    uLongf n = compressBound(g->size);
    unsigned char *z = malloc(n);
    if (!z || compress2(z, &n, (const Bytef *)g->data, g->size, 9) != Z_OK) exit(1);
    const uint64_t n64 = n;
    fwrite(&n64, 8, 1, fp);
    fwrite(z, 1, n, fp);
    free(z);
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    const int n = 12;
    float d[12 * 12 * 12];
    for (int i = 0; i < n * n * n; i++) {
        const int x = i % n, y = i / n % n, z = i / (n * n);
        const int r2 = (x - 3) * (x - 3) + (y - 4) * (y - 4) + (z - 5) * (z - 5);
        d[i] = r2 < 10 ? 1.0f - (float)r2 / 10.0f : 0.0f;
    }
    VptSparseGrid g;
    if (vpt_sparse_grid_build(d, n, n, n, "density", &g)) return 1;
    static const char *const names[] = {"cloud.nvdb", "cloud_zip.nvdb", "two_segments.nvdb"};
    for (int k = 0; k < 3; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[k]);
        FILE *fp = fopen(path, "wb");
        if (!fp) return 1;
        segment(fp, &g, k == 2 ? "temperature" : "density", k != 0);
        if (k == 2) segment(fp, &g, "density", 1);
        if (fclose(fp)) return 1;
    }
    vpt_sparse_grid_free(&g);
    return 0;
}
