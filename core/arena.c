/*
 * arena.c: bump allocation, growable buffers and error lists for the core.
 */
#include "ki_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ki_arena_block
{
	ki_arena_block *next;
	size_t		size;			/* usable bytes after the 16-byte header */
};

#define KI_BLOCK_SIZE (64 * 1024)

static void *
malloc_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return malloc(size);
}

static void
malloc_free(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

/* Set up an arena over the given allocator. */
void
ki_arena_init(ki_arena *a, ki_alloc_fn alloc_fn, ki_free_fn free_fn, void *ctx)
{
	a->alloc_fn = alloc_fn;
	a->free_fn = free_fn;
	a->ctx = ctx;
	a->blocks = NULL;
	a->cur = NULL;
	a->left = 0;
	a->failed = false;
}

/* Set up an arena over malloc and free. */
void
ki_arena_init_malloc(ki_arena *a)
{
	ki_arena_init(a, malloc_alloc, malloc_free, NULL);
}

/* Allocate size bytes aligned to 16; NULL (and a->failed) when out of memory. */
void *
ki_alloc(ki_arena *a, size_t size)
{
	void	   *p;

	size = (size + 15) & ~(size_t) 15;
	if (size > a->left)
	{
		size_t		want = size > KI_BLOCK_SIZE / 4 ? size + 16 : KI_BLOCK_SIZE;
		ki_arena_block *b = a->alloc_fn(a->ctx, want + 16);

		if (b == NULL)
		{
			a->failed = true;
			return NULL;
		}
		b->size = want;
		if (size > KI_BLOCK_SIZE / 4 && a->blocks != NULL)
		{
			/* a dedicated block, behind the current one, which stays */
			b->next = a->blocks->next;
			a->blocks->next = b;
			return (char *) b + 16;
		}
		b->next = a->blocks;
		a->blocks = b;
		if (size > KI_BLOCK_SIZE / 4)
		{
			a->cur = (char *) b + 16 + size;
			a->left = want - size;
			return (char *) b + 16;
		}
		a->cur = (char *) b + 16;
		a->left = want;
	}
	p = a->cur;
	a->cur += size;
	a->left -= size;
	return p;
}

/* Copy n bytes into the arena and NUL-terminate them. */
char *
ki_strndup(ki_arena *a, const char *s, size_t n)
{
	char	   *p = ki_alloc(a, n + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/*
 * Forget every allocation but keep the first block for reuse (a scratch
 * arena that lives across calls); the other blocks are given back.
 */
void
ki_arena_rewind(ki_arena *a)
{
	ki_arena_block *b = a->blocks;
	ki_arena_block *keep = NULL;

	while (b != NULL)
	{
		ki_arena_block *next = b->next;

		if (next == NULL)
			keep = b;			/* the oldest block */
		else if (a->free_fn)
			a->free_fn(a->ctx, b);
		b = next;
	}
	a->blocks = keep;
	a->cur = keep ? (char *) keep + 16 : NULL;
	a->left = keep ? keep->size : 0;
	a->failed = false;
}

/* Give every block back (when the arena owns its memory). */
void
ki_arena_reset(ki_arena *a)
{
	ki_arena_block *b = a->blocks;

	while (b != NULL)
	{
		ki_arena_block *next = b->next;

		if (a->free_fn)
			a->free_fn(a->ctx, b);
		b = next;
	}
	a->blocks = NULL;
	a->cur = NULL;
	a->left = 0;
	a->failed = false;
}

/* Start an empty buffer with room for initial bytes. */
void
ki_buf_init(ki_buf *b, ki_arena *a, size_t initial)
{
	b->arena = a;
	b->len = 0;
	b->cap = initial < 64 ? 64 : initial;
	b->data = ki_alloc(a, b->cap);
	if (b->data == NULL)
		b->cap = 0;
}

static bool
buf_reserve(ki_buf *b, size_t extra)
{
	size_t		need = b->len + extra + 1;
	size_t		cap;
	char	   *data;

	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	data = ki_alloc(b->arena, cap);
	if (data == NULL)
		return false;
	if (b->len)
		memcpy(data, b->data, b->len);
	b->data = data;
	b->cap = cap;
	return true;
}

/* Append n bytes. */
void
ki_buf_put(ki_buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

/* Append one byte when the buffer must grow (ki_buf_putc is inline). */
void
ki_buf_putc_slow(ki_buf *b, char c)
{
	if (!buf_reserve(b, 1))
		return;
	b->data[b->len++] = c;
}

/* Append a NUL-terminated string. */
void
ki_buf_puts(ki_buf *b, const char *s)
{
	ki_buf_put(b, s, strlen(s));
}

/* The contents as a C string. */
const char *
ki_buf_cstr(ki_buf *b)
{
	if (!buf_reserve(b, 0))
		return "";
	b->data[b->len] = '\0';
	return b->data;
}

/* Start an empty error list. */
void
ki_errors_init(ki_errors *e, ki_arena *a)
{
	e->arena = a;
	e->items = NULL;
	e->count = 0;
	e->cap = 0;
	e->status = KI_OK;
	e->count_only = false;
}

/* Record one problem; the first one sets the list's status. */
void
ki_errors_add(ki_errors *e, ki_status st, const char *path, const char *rule,
			  long offset, const char *fmt,...)
{
	char		msg[512];
	va_list		ap;
	ki_error   *err;

	if (e->status == KI_OK)
		e->status = st;
	if (e->count_only)
	{
		e->count++;
		return;
	}
	if (e->count == e->cap)
	{
		int			cap = e->cap ? e->cap * 2 : 8;
		ki_error   *items = ki_alloc(e->arena, sizeof(ki_error) * cap);

		if (items == NULL)
			return;
		if (e->count)
			memcpy(items, e->items, sizeof(ki_error) * e->count);
		e->items = items;
		e->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err = &e->items[e->count++];
	err->path = ki_strndup(e->arena, path ? path : "", path ? strlen(path) : 0);
	err->rule = rule;
	err->message = ki_strndup(e->arena, msg, strlen(msg));
	err->offset = offset;
}
