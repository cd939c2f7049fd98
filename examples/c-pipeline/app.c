/* The real program: items made by gen, sorted and checksummed, on two threads, each
 * kept on a core of its own.
 *
 *     ./app pipe X [ITEMS]   a pipeline: one thread makes the items, the other sorts
 *                            and checks them      (term: pipe(gen, seq(sort, checksum)))
 *     ./app pool X [ITEMS]   a task pool of two workers, each doing all three blocks on
 *                            the items it takes   (term: tpool(2, seq(gen, sort, checksum)))
 *
 * It prints its own time per item (from the first item started to the last finished):
 *
 *     pipe x=4000: 190523.7 ns per item (checksum 1234567)
 */
#define _GNU_SOURCE
#include "blocks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bounded queue of items between the pipeline's stages. A full queue wakes its
 * producer again only once it is half empty: a wake-up per item would cost the consumer
 * a system call per item (several µs on a virtual machine). */
#define CAPACITY 8
struct queue {
    int *slot[CAPACITY];
    size_t head, count;
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
};

static void push(struct queue *q, int *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == CAPACITY)
        pthread_cond_wait(&q->not_full, &q->lock);
    q->slot[(q->head + q->count) % CAPACITY] = item;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

static int *pop(struct queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == 0)
        pthread_cond_wait(&q->not_empty, &q->lock);
    int *item = q->slot[q->head];
    q->head = (q->head + 1) % CAPACITY;
    q->count--;
    if (q->count == CAPACITY / 2)
        pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->lock);
    return item;
}

struct run {
    size_t x, items;
    struct queue q;
    atomic_size_t next;
    uint64_t sums[2];
};

static int *make_item(size_t x, size_t i)
{
    int *a = malloc(x * sizeof *a);
    if (!a) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    gen(a, x, i);
    return a;
}

static void *first_stage(void *arg)
{
    struct run *r = arg;
    for (size_t i = 0; i < r->items; i++)
        push(&r->q, make_item(r->x, i));
    return NULL;
}

static void *second_stage(void *arg)
{
    struct run *r = arg;
    for (size_t i = 0; i < r->items; i++) {
        int *a = pop(&r->q);
        sort_ints(a, r->x);
        r->sums[0] += checksum(a, r->x);
        free(a);
    }
    return NULL;
}

struct worker {
    struct run *r;
    int id;
};

static void *pool_worker(void *arg)
{
    struct worker *w = arg;
    struct run *r = w->r;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->items)
            break;
        int *a = make_item(r->x, i);
        sort_ints(a, r->x);
        r->sums[w->id] += checksum(a, r->x);
        free(a);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (strcmp(argv[1], "pipe") != 0 && strcmp(argv[1], "pool") != 0)) {
        fprintf(stderr, "usage: %s pipe|pool X [ITEMS]\n", argv[0]);
        return 2;
    }
    struct run r;
    memset(&r, 0, sizeof r);
    r.x = parse_size("X", argv[2]);
    r.items = argc == 4 ? parse_size("ITEMS", argv[3]) : items_for(r.x);
    pthread_mutex_init(&r.q.lock, NULL);
    pthread_cond_init(&r.q.not_empty, NULL);
    pthread_cond_init(&r.q.not_full, NULL);
    atomic_init(&r.next, 0);

    pthread_t t[2];
    struct worker w[2] = {{&r, 0}, {&r, 1}};
    double t0 = now_ns();
    if (argv[1][1] == 'i') { /* pipe */
        pthread_create(&t[0], NULL, first_stage, &r);
        pthread_create(&t[1], NULL, second_stage, &r);
    } else {
        pthread_create(&t[0], NULL, pool_worker, &w[0]);
        pthread_create(&t[1], NULL, pool_worker, &w[1]);
    }
    pin(t[0], 0);
    pin(t[1], 1);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    double per_item = (now_ns() - t0) / (double)r.items;
    printf("%s x=%zu: %.1f ns per item (items %zu, checksum %llu)\n", argv[1], r.x, per_item,
           r.items, (unsigned long long)((r.sums[0] ^ r.sums[1]) & 0xffffff));
    return 0;
}
