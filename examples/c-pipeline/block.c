/* One block alone, as a unit performance test: `./block NAME X [ITEMS]` runs block NAME
 * (gen, sort or checksum) on ITEMS items of X ints and prints its own time per item:
 *
 *     sort x=4000: 187342.1 ns per item
 *
 * Only the block is timed: each item's input is made before the clock starts (a block
 * gets its input from the one before it in the real program). */
#include "blocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s gen|sort|checksum X [ITEMS]\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    size_t x = parse_size("X", argv[2]);
    size_t items = argc == 4 ? parse_size("ITEMS", argv[3]) : items_for(x);
    int which = strcmp(name, "gen") == 0 ? 0 : strcmp(name, "sort") == 0 ? 1
              : strcmp(name, "checksum") == 0 ? 2 : -1;
    if (which < 0) {
        fprintf(stderr, "unknown block `%s` (gen, sort or checksum)\n", name);
        return 2;
    }
    uint64_t sink = 0;
    double total = 0.0;
    for (size_t i = 0; i < items; i++) {
        int *a = malloc(x * sizeof *a);
        if (!a) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        double t0 = 0.0;
        if (which == 0) {
            t0 = now_ns();
            gen(a, x, i);
        } else {
            gen(a, x, i);
            if (which == 2)
                sort_ints(a, x);
            t0 = now_ns();
            if (which == 1)
                sort_ints(a, x);
            else
                sink ^= checksum(a, x);
        }
        total += now_ns() - t0;
        sink += (uint64_t)a[x / 2];
        free(a);
    }
    printf("%s x=%zu: %.1f ns per item (items %zu, sink %llu)\n", name, x, total / (double)items,
           items, (unsigned long long)(sink & 0xff));
    return 0;
}
