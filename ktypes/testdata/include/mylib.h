#ifndef MYLIB_H
#define MYLIB_H
#include "sub/inner.h"
#define NAME_LEN 24
#define ARR(x) ((x) * 2)
#if 0
struct never { int x; };
#endif
#if defined(__x86_64__) && NAME_LEN > 16
typedef unsigned long word_t;
#else
typedef unsigned int word_t;
#endif
static inline int helper(int x) { return x + 1; }
extern int prototype(const char *fmt, ...);
struct mylib_rec {
	struct inner in;
	char name[NAME_LEN];
	word_t w;
	int vals[ARR(3)];
};
#endif
