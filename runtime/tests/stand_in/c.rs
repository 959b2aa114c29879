//! The C sources of the stand-in driver, runtime and callers, generated from [`FUNS`].

use std::fmt::Write as _;

use super::{FUNS, proc_request};

/// The stand-in driver's C source.
pub(crate) fn driver_c() -> String {
    let mut c = String::from(DRIVER_HEAD);
    for fun in FUNS.iter().filter(|f| !f.runtime) {
        let params: Vec<String> = (fun.args.iter().enumerate())
            .map(|(i, t)| format!("{} a{i}", t.c()))
            .collect();
        let record: Vec<String> = (fun.args.iter().enumerate())
            .map(|(i, t)| t.to_u64(&format!("a{i}")))
            .collect();
        let params = if params.is_empty() {
            "void".to_owned()
        } else {
            params.join(", ")
        };
        let _ = writeln!(
            c,
            "int {n}({params}) {{\n  unsigned long long a[12] = {{ {r} }};\n  stand_in_record(\"{n}\", {k}, a);\n  return stand_in_result;\n}}\nextern __typeof({n}) {n}_own __attribute__((alias(\"{n}\"), visibility(\"hidden\")));",
            n = fun.name,
            r = if record.is_empty() {
                "0".to_owned()
            } else {
                record.join(", ")
            },
            k = fun.args.len(),
        );
    }
    c.push_str("static const struct row rows[] = {\n");
    for fun in FUNS.iter().filter(|f| !f.runtime) {
        let (base, min, pt) = proc_request(fun.name);
        let _ = writeln!(
            c,
            "  {{ \"{base}\", {min}, {}, (void *){}_own }},",
            u8::from(pt),
            fun.name
        );
    }
    for own in [
        "cuInit",
        "cuDriverGetVersion",
        "cuGetErrorName",
        "cuCtxGetCurrent",
        "cuPointerGetAttribute",
    ] {
        let _ = writeln!(c, "  {{ \"{own}\", 0, 0, (void *){own}_own }},");
    }
    c.push_str("  { \"cuGetProcAddress\", 0, 0, (void *)cuGetProcAddress_own },\n");
    c.push_str("  { \"cuGetProcAddress\", 12000, 0, (void *)cuGetProcAddress_v2_own },\n");
    c.push_str("};\n");
    c.push_str(DRIVER_TAIL);
    c
}

const DRIVER_HEAD: &str = r#"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

int stand_in_result;
char stand_in_pinned[1 << 20];
static int initialized;

struct rec { const char *name; unsigned long long calls; unsigned long long args[12]; };
static struct rec recs[128];
static int nrecs;
static const char *latest;
static unsigned long long attribute_queries;

static struct rec *rec_of(const char *name) {
  for (int i = 0; i < nrecs; i++) if (strcmp(recs[i].name, name) == 0) return &recs[i];
  if (nrecs == 128) abort();
  recs[nrecs].name = name;
  return &recs[nrecs++];
}

void stand_in_record(const char *name, int n, const unsigned long long *a) {
  struct rec *r = rec_of(name);
  r->calls++;
  memset(r->args, 0, sizeof r->args);
  memcpy(r->args, a, (size_t)n * sizeof *a);
  latest = name;
}

/* How many calls of `name` since the last reset; its latest arguments into `out`. */
unsigned long long stand_in_last(const char *name, unsigned long long out[12]) {
  struct rec *r = rec_of(name);
  memcpy(out, r->args, sizeof r->args);
  return r->calls;
}

/* The name of the latest recorded call, "" if none since the last reset. */
const char *stand_in_latest(void) { return latest ? latest : ""; }

/* Every recorded call since the last reset. */
unsigned long long stand_in_total(void) {
  unsigned long long n = 0;
  for (int i = 0; i < nrecs; i++) n += recs[i].calls;
  return n;
}

void stand_in_reset(void) {
  for (int i = 0; i < nrecs; i++) { recs[i].calls = 0; memset(recs[i].args, 0, sizeof recs[i].args); }
  latest = 0;
}

unsigned long long stand_in_attribute_queries(void) { return attribute_queries; }

int cuInit(unsigned int flags) {
  (void)flags;
  const char *fail = getenv("STAND_IN_INIT_RESULT");
  if (fail && *fail) return atoi(fail);
  initialized = 1;
  return 0;
}
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuGetErrorName(int e, const char **s) {
  *s = e == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_STAND_IN";
  return 0;
}
int cuCtxGetCurrent(void **c) { *c = 0; return initialized ? 0 : 3; }
int cuPointerGetAttribute(void *data, unsigned int attribute, unsigned long long ptr) {
  attribute_queries++;
  unsigned long long pinned = (unsigned long long)(uintptr_t)stand_in_pinned;
  int in_pinned = ptr >= pinned && ptr < pinned + sizeof stand_in_pinned;
  if (attribute == 2) {
    if (in_pinned) { *(unsigned int *)data = 1; return 0; }
    if (ptr >= 0xd000000000000000ULL) { *(unsigned int *)data = 2; return 0; }
    return 1;
  }
  if (attribute == 17) {
    if (ptr >= 0xe000000000000000ULL) { *(void **)data = (void *)0x900d; return 0; }
    if (ptr >= 0xd000000000000000ULL || in_pinned) { *(void **)data = 0; return 0; }
    return 1;
  }
  return 1;
}
int cuGetProcAddress(const char *name, void **pfn, int version, unsigned long long flags);
int cuGetProcAddress_v2(const char *name, void **pfn, int version, unsigned long long flags, int *status);
extern __typeof(cuInit) cuInit_own __attribute__((alias("cuInit"), visibility("hidden")));
extern __typeof(cuDriverGetVersion) cuDriverGetVersion_own __attribute__((alias("cuDriverGetVersion"), visibility("hidden")));
extern __typeof(cuGetErrorName) cuGetErrorName_own __attribute__((alias("cuGetErrorName"), visibility("hidden")));
extern __typeof(cuCtxGetCurrent) cuCtxGetCurrent_own __attribute__((alias("cuCtxGetCurrent"), visibility("hidden")));
extern __typeof(cuPointerGetAttribute) cuPointerGetAttribute_own __attribute__((alias("cuPointerGetAttribute"), visibility("hidden")));
extern __typeof(cuGetProcAddress) cuGetProcAddress_own __attribute__((alias("cuGetProcAddress"), visibility("hidden")));
extern __typeof(cuGetProcAddress_v2) cuGetProcAddress_v2_own __attribute__((alias("cuGetProcAddress_v2"), visibility("hidden")));
struct row { const char *base; int min_version; int per_thread; void *fn; };
"#;

const DRIVER_TAIL: &str = r#"
/* Like the driver: the highest versioned ABI at `version`, the per-thread one if asked for and
   there is one; not found is success with a null function. */
static int lookup(const char *name, void **pfn, int version, unsigned long long flags, int *status) {
  const struct row *best = 0;
  int known = 0;
  for (int pass = (flags & 2) ? 1 : 0; pass >= 0 && !best; pass--) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
      if (strcmp(rows[i].base, name) != 0) continue;
      known = 1;
      if (rows[i].per_thread != pass || rows[i].min_version > version) continue;
      if (!best || rows[i].min_version > best->min_version) best = &rows[i];
    }
  }
  if (pfn) *pfn = best ? best->fn : 0;
  if (status) *status = best ? 0 : known ? 2 : 1;
  return 0;
}
int cuGetProcAddress(const char *name, void **pfn, int version, unsigned long long flags) {
  unsigned long long a[12] = { (unsigned long long)(uintptr_t)name, (unsigned long long)(uintptr_t)pfn, (unsigned long long)version, flags };
  stand_in_record("cuGetProcAddress", 4, a);
  return lookup(name, pfn, version, flags, 0);
}
int cuGetProcAddress_v2(const char *name, void **pfn, int version, unsigned long long flags, int *status) {
  unsigned long long a[12] = { (unsigned long long)(uintptr_t)name, (unsigned long long)(uintptr_t)pfn, (unsigned long long)version, flags, (unsigned long long)(uintptr_t)status };
  stand_in_record("cuGetProcAddress_v2", 5, a);
  return lookup(name, pfn, version, flags, status);
}
"#;

/// The stand-in runtime: its synchronizations call the driver's `cuCtxSynchronize` through its
/// own import slot, as libcudart does.
pub(crate) const CUDART_C: &str = r#"
int cuCtxSynchronize(void);
void stand_in_record(const char *name, int n, const unsigned long long *a);
int cudaDeviceSynchronize(void) { stand_in_record("cudaDeviceSynchronize", 0, 0); return cuCtxSynchronize(); }
int cudaThreadSynchronize(void) { stand_in_record("cudaThreadSynchronize", 0, 0); return cuCtxSynchronize(); }
"#;

/// The callers' C source: `call_<name>(args)` through the import slot, `via_<name>(fn, args)`
/// through a function pointer.
pub(crate) fn callers_c() -> String {
    let mut c = String::from("#include <stdint.h>\n#include <stddef.h>\n");
    for fun in &FUNS {
        let types: Vec<&str> = fun.args.iter().map(|t| t.c()).collect();
        let types = if types.is_empty() {
            "void".to_owned()
        } else {
            types.join(", ")
        };
        let args: Vec<String> = (fun.args.iter().enumerate())
            .map(|(i, t)| t.cast_u64(&format!("a[{i}]")))
            .collect();
        let _ = writeln!(
            c,
            "int {n}({types});\nint call_{n}(const unsigned long long *a) {{ (void)a; return {n}({args}); }}\nint via_{n}(void *f, const unsigned long long *a) {{ (void)a; return ((int (*)({types}))f)({args}); }}",
            n = fun.name,
            args = args.join(", "),
        );
    }
    c
}
