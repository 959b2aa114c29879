// What CUPTI's presence costs a driver call, by what is enabled: one process per variant, many
// processes in rotation (run.sh), medians of blocks. Variants:
//  0 none  1 subscribed, nothing enabled  2 subscribed + capture begin/end only
//  3 subscribed + blocking calls enabled  4 as 3, then all disabled  5 as 3, then unsubscribed
//  6 subscribed + runtime cudaDeviceSynchronize only  7 no CUPTI, calls through an interposer-style
//    wrapper (a thread-local read and a relaxed atomic load before the real call)
#include <cuda.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <atomic>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("CUDA error %d at %d\n", r_, __LINE__); exit(1);} } while (0)
#define CP(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { printf("CUPTI error %d at %d\n", r_, __LINE__); exit(1);} } while (0)

static const char *PTX =
  ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry empty() { ret; }\n";

static void CUPTIAPI on_api(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

static thread_local int in_scope = 0;
static std::atomic<int> active{0};
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*sync_fn)(CUstream);
static volatile launch_fn real_launch = cuLaunchKernel;
static volatile sync_fn real_sync = cuStreamSynchronize;
__attribute__((noinline)) static CUresult w_launch(CUfunction f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned sh, CUstream s, void **p, void **x) {
  if (active.load(std::memory_order_relaxed) && in_scope) __asm__ volatile("");
  return real_launch(f, a, b, c, d, e, g, sh, s, p, x);
}
__attribute__((noinline)) static CUresult w_sync(CUstream s) {
  int look = active.load(std::memory_order_relaxed) && in_scope;
  CUresult r = real_sync(s);
  if (look) __asm__ volatile("");
  return r;
}

int main(int argc, char **argv) {
  int v = atoi(argv[1]); int blocks = argc > 2 ? atoi(argv[2]) : 15;
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  CUmodule m; CK(cuModuleLoadData(&m, PTX)); CUfunction k; CK(cuModuleGetFunction(&k, m, "empty"));
  CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUpti_SubscriberHandle sub;
  CUpti_CallbackId block_ids[] = {CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
    CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync};
  CUpti_CallbackId cap_ids[] = {CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz};
  if (v >= 1 && v <= 6) CP(cuptiSubscribe(&sub, (CUpti_CallbackFunc)on_api, NULL));
  if (v == 2) for (auto id : cap_ids) (void)cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
  if (v >= 3 && v <= 5) for (auto id : block_ids) (void)cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
  if (v == 4) for (auto id : block_ids) (void)cuptiEnableCallback(0, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
  if (v == 5) CP(cuptiUnsubscribe(sub));
  if (v == 6) CP(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020));
  if (v == 7) active = 1;
  void *noargs[] = {NULL};
  std::vector<double> L, C, Q, S;
  for (int b = 0; b < blocks + 2; b++) {
    double t = now();
    for (int i = 0; i < 2000; i++) { if (v == 7) w_launch(k, 1,1,1, 1,1,1, 0, s, noargs, NULL); else cuLaunchKernel(k, 1,1,1, 1,1,1, 0, s, noargs, NULL); }
    if (v == 7) w_sync(s); else cuStreamSynchronize(s);
    double l = (now() - t) / 2000;
    t = now();
    for (int i = 0; i < 2000; i++) { CUcontext c; cuCtxGetCurrent(&c); if (v == 7) w_launch(k, 1,1,1, 1,1,1, 0, s, noargs, NULL); else cuLaunchKernel(k, 1,1,1, 1,1,1, 0, s, noargs, NULL); }
    cuStreamSynchronize(s);
    double c = (now() - t) / 2000;
    t = now(); for (int i = 0; i < 5000; i++) cuStreamQuery(s); double q = (now() - t) / 5000;
    t = now(); for (int i = 0; i < 5000; i++) { if (v == 7) w_sync(s); else cuStreamSynchronize(s); } double sy = (now() - t) / 5000;
    if (b >= 2) { L.push_back(l); C.push_back(c); Q.push_back(q); S.push_back(sy); }
  }
  auto med = [](std::vector<double> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; };
  printf("%d %.1f %.1f %.1f %.1f\n", v, med(L), med(C), med(Q), med(S));
  return 0;
}
