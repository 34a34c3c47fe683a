/* A stand-in for libcuda.so with cuInit alone (what gdscan calls before
 * cuFile's driver opens), for tests/cufile_fake.rs. */
int cuInit(unsigned int flags) { (void)flags; return 0; }
