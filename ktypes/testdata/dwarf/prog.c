/* Built with: gcc -g -O0 -o prog prog.c (the DWARF fixture of dwarf_test.go) */
struct Foo {
  int a;
  char b[10];
  int c[3];
  struct Foo *next;
  unsigned int bits : 3, more : 5;
};

typedef long myint;

int function1(int *n, char c) { return *n + c; }

struct Foo *function2(struct Foo *foo1, struct Foo *foo2, myint k) { return k ? foo1 : foo2; }

int main(void) {
  int n = 13;
  struct Foo f = {0};
  return function1(&n, 'x') + (function2(&f, &f, 1) != 0);
}
