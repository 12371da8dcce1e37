#ifndef UTIL_H
#define UTIL_H

struct point {
  int x;
  int y;
};

/* Adds two numbers. */
int add(int a, int b);

#endif
