/* One block as a unit performance test: `./block NAME X [HOW] [ITEMS]` runs block NAME
 * (gen, sort or checksum) on ITEMS items of X ints and prints its own time per item:
 *
 *     sort x=4000: 187342.1 ns per item (alone, items 250)
 *
 * Only the block is timed; each item's input is made before the clock starts. HOW says
 * where, so that a block is timed the way the real program runs it:
 *
 *   alone   (default) on this thread, just before: the input is in this core's cache,
 *           as for a block that follows another on the same thread
 *   remote  by a thread on the other core, just before: the input arrives from another
 *           core, as for the first block of a pipeline's second stage
 *   loaded  alone, on two threads at once, one per core, each on its own items (the
 *           time is their mean): the block as a task pool of two workers runs it */
#define _GNU_SOURCE
#include "blocks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum how { ALONE, REMOTE, LOADED };

struct job {
    int which;
    enum how how;
    size_t x, items;
    double total;
    uint64_t sink;
    /* remote: the helper makes item i into `item` between the two barrier waits */
    pthread_barrier_t start, made;
    int *item;
    size_t next;
};

static void *helper(void *arg)
{
    struct job *j = arg;
    for (size_t i = 0; i < j->items; i++) {
        pthread_barrier_wait(&j->start);
        gen(j->item, j->x, i);
        if (j->which == 2)
            sort_ints(j->item, j->x);
        pthread_barrier_wait(&j->made);
    }
    return NULL;
}

static void *run(void *arg)
{
    struct job *j = arg;
    for (size_t i = 0; i < j->items; i++) {
        int *a = malloc(j->x * sizeof *a);
        if (!a) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        double t0;
        if (j->which == 0) {
            t0 = now_ns();
            gen(a, j->x, i);
        } else {
            if (j->how == REMOTE) {
                j->item = a;
                pthread_barrier_wait(&j->start);
                pthread_barrier_wait(&j->made);
            } else {
                gen(a, j->x, i);
                if (j->which == 2)
                    sort_ints(a, j->x);
            }
            t0 = now_ns();
            if (j->which == 1)
                sort_ints(a, j->x);
            else
                j->sink ^= checksum(a, j->x);
        }
        j->total += now_ns() - t0;
        j->sink += (uint64_t)a[j->x / 2];
        free(a);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: %s gen|sort|checksum X [alone|remote|loaded] [ITEMS]\n", argv[0]);
        return 2;
    }
    const char *name = argv[1];
    int which = strcmp(name, "gen") == 0 ? 0 : strcmp(name, "sort") == 0 ? 1
              : strcmp(name, "checksum") == 0 ? 2 : -1;
    if (which < 0) {
        fprintf(stderr, "unknown block `%s` (gen, sort or checksum)\n", name);
        return 2;
    }
    size_t x = parse_size("X", argv[2]);
    const char *how_text = argc >= 4 ? argv[3] : "alone";
    enum how how = strcmp(how_text, "alone") == 0 ? ALONE : strcmp(how_text, "remote") == 0 ? REMOTE
                 : strcmp(how_text, "loaded") == 0 ? LOADED : (enum how)-1;
    if ((int)how < 0 || (how == REMOTE && which == 0)) {
        fprintf(stderr, "`%s`: give alone, remote or loaded (gen makes its own input: not remote)\n",
                how_text);
        return 2;
    }
    size_t items = argc == 5 ? parse_size("ITEMS", argv[4]) : items_for(x);

    struct job jobs[2];
    memset(jobs, 0, sizeof jobs);
    int threads = how == LOADED ? 2 : 1;
    pthread_t t[2], h;
    for (int i = 0; i < threads; i++) {
        jobs[i] = (struct job){.which = which, .how = how, .x = x, .items = items};
    }
    if (how == REMOTE) {
        pthread_barrier_init(&jobs[0].start, NULL, 2);
        pthread_barrier_init(&jobs[0].made, NULL, 2);
        pthread_create(&h, NULL, helper, &jobs[0]);
        pin(h, 1);
    }
    for (int i = 0; i < threads; i++) {
        pthread_create(&t[i], NULL, run, &jobs[i]);
        pin(t[i], i);
    }
    double total = 0.0;
    uint64_t sink = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        total += jobs[i].total;
        sink ^= jobs[i].sink;
    }
    if (how == REMOTE)
        pthread_join(h, NULL);
    printf("%s x=%zu: %.1f ns per item (%s, items %zu, sink %llu)\n", name, x,
           total / (double)(items * (size_t)threads), how_text, items, (unsigned long long)(sink & 0xff));
    return 0;
}
