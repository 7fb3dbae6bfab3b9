#include <stddef.h>

/* A fixed-size ring buffer. */
struct ring {
    char *data;
    size_t head;
};

/* Writes bytes, wrapping at the end. */
size_t ring_write(struct ring *r, const char *src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        r->data[(r->head + i) % 64] = src[i];
    }
    r->head += n;
    return n;
}

typedef struct {
    int x;
} point_t;
