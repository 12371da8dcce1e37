#include <stdio.h>
#include "util.h"

int main(void) {
  const char *greeting = "héllo 🌍"; int total = add(1, 2);
  struct point p = add(3, 4); /* deliberate type error */
  printf("%s %d %d\n", greeting, total, p.x);
  return 0;
}
