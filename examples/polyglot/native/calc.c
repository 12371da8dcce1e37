int square(int x) { return x * x; }

int main(void) {
  char *s = square(3); /* deliberate type error */
  return s == 0;
}
