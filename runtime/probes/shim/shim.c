/* A preloaded shim of a few driver calls, as GPU-sharing limiters and tracers are: each call is
 * counted and forwarded to the next definition (RTLD_NEXT); the counts are printed at exit.
 * Run a program with LD_PRELOAD=libshim.so to check that nosync's interposer keeps it in the
 * call path (the counts stay above zero with the hook installed).
 *
 *   cc -shared -fPIC -O2 -o libshim.so runtime/probes/shim/shim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

static unsigned long syncs, reads, launches;

#define FORWARD(ret, name, params, args, counter)                                   \
  ret name params {                                                                 \
    static ret(*next) params;                                                       \
    if (!next) next = (ret(*) params)dlsym(RTLD_NEXT, #name);                       \
    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);                              \
    return next args;                                                               \
  }

FORWARD(int, cuStreamSynchronize, (void *s), (s), syncs)
FORWARD(int, cuCtxSynchronize, (void), (), syncs)
FORWARD(int, cuMemcpyDtoHAsync_v2, (void *d, unsigned long long s, size_t n, void *st),
        (d, s, n, st), reads)
FORWARD(int, cuMemcpyDtoH_v2, (void *d, unsigned long long s, size_t n), (d, s, n), reads)
FORWARD(int, cuLaunchKernel,
        (void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
         unsigned sh, void *st, void **p, void **e),
        (f, gx, gy, gz, bx, by, bz, sh, st, p, e), launches)

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "shim: %lu synchronizations, %lu device-to-host copies, %lu launches seen\n",
          syncs, reads, launches);
}
