/* A stand-in for libcufile.so, built by tests/cufile_fake.rs with the cc
 * crate and named with GDSCAN_CUFILE_LIBRARY. FAKE_CUFILE_MODE chooses how
 * it behaves:
 *   open_fail      cuFileDriverOpen fails (5011)
 *   register_fail  cuFileHandleRegister fails (5027)
 *   compat         the driver opens; nvidia-fs version 0.0, no P2PDMA
 *   nvfs           the driver opens; nvidia-fs 2.20
 *   p2p            the driver opens; nvidia-fs 0.0, NVMe P2PDMA reported
 *   slow           cuFileDriverOpen takes 300 ms (as the real one takes
 *                  about a second without nvidia-fs)
 * Modes combine, separated by commas ("nvfs,register_fail"). Every other
 * call succeeds and does nothing. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

typedef struct { int err; int cu_err; } CUfileError_t;
typedef struct {
    unsigned major_version, minor_version;
    size_t poll_thresh_size, max_direct_io_size;
    unsigned dstatusflags, dcontrolflags;
} nvfs_props;

static int mode_is(const char *m) {
    const char *v = getenv("FAKE_CUFILE_MODE");
    return v && strstr(v, m) != NULL;
}
static CUfileError_t ok(void) { CUfileError_t e = {0, 0}; return e; }
static CUfileError_t fail(int code) { CUfileError_t e = {code, 0}; return e; }

CUfileError_t cuFileDriverOpen(void) {
    if (mode_is("slow")) {
        struct timespec t = {0, 300000000};
        nanosleep(&t, NULL);
    }
    return mode_is("open_fail") ? fail(5011) : ok();
}
CUfileError_t cuFileDriverClose(void) { return ok(); }
CUfileError_t cuFileDriverGetProperties(void *props) {
    nvfs_props *p = (nvfs_props *)props;
    p->max_direct_io_size = 16 << 20;
    p->poll_thresh_size = 4096;
    if (mode_is("nvfs")) { p->major_version = 2; p->minor_version = 20; }
    if (mode_is("p2p")) p->dstatusflags = 1u << 11;
    return ok();
}
CUfileError_t cuFileGetVersion(int *v) { *v = 1151; return ok(); }
CUfileError_t cuFileHandleRegister(void **fh, void *descr) {
    (void)descr;
    if (mode_is("register_fail")) return fail(5027);
    *fh = (void *)0x1;
    return ok();
}
void cuFileHandleDeregister(void *fh) { (void)fh; }
CUfileError_t cuFileBufRegister(const void *p, size_t n, int f) { (void)p; (void)n; (void)f; return ok(); }
CUfileError_t cuFileBufDeregister(const void *p) { (void)p; return ok(); }
ssize_t cuFileRead(void *fh, void *b, size_t n, off_t fo, off_t bo) { (void)fh; (void)b; (void)fo; (void)bo; return (ssize_t)n; }
ssize_t cuFileWrite(void *fh, const void *b, size_t n, off_t fo, off_t bo) { (void)fh; (void)b; (void)fo; (void)bo; return (ssize_t)n; }
CUfileError_t cuFileGetParameterSizeT(int k, size_t *v) { (void)k; *v = 0; return ok(); }
CUfileError_t cuFileGetParameterBool(int k, _Bool *v) { (void)k; *v = 0; return ok(); }
CUfileError_t cuFileGetParameterString(int k, char *v, int n) { (void)k; if (n > 0) v[0] = 0; return ok(); }
CUfileError_t cuFileSetParameterSizeT(int k, size_t v) { (void)k; (void)v; return ok(); }
CUfileError_t cuFileSetParameterBool(int k, _Bool v) { (void)k; (void)v; return ok(); }
CUfileError_t cuFileSetParameterString(int k, const char *v) { (void)k; (void)v; return ok(); }
CUfileError_t cuFileGetParameterMinMaxValue(int k, size_t *lo, size_t *hi) { (void)k; *lo = 0; *hi = 0; return ok(); }
CUfileError_t cuFileSetStatsLevel(int l) { (void)l; return ok(); }
CUfileError_t cuFileGetStatsLevel(int *l) { *l = 0; return ok(); }
CUfileError_t cuFileStatsStart(void) { return ok(); }
CUfileError_t cuFileStatsReset(void) { return ok(); }
CUfileError_t cuFileStatsStop(void) { return ok(); }
CUfileError_t cuFileGetStatsL1(void *s) { (void)s; return ok(); }
CUfileError_t cuFileGetStatsL3(void *s) { (void)s; return ok(); }
