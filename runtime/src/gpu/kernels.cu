// nosync's built-in kernels, compiled at run time with NVRTC (see kernels.rs).
#define RED_THREADS 1024
#define NO_INDEX 0xffffffffu

#define GRID_STRIDE(i, n) \
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

extern "C" __global__ void nosync_fill(float* x, float v, unsigned int n) {
    GRID_STRIDE(i, n) x[i] = v;
}

extern "C" __global__ void nosync_scale(float* x, float a, unsigned int n) {
    GRID_STRIDE(i, n) x[i] *= a;
}

extern "C" __global__ void nosync_axpy(float a, const float* x, float* y, unsigned int n) {
    GRID_STRIDE(i, n) y[i] += a * x[i];
}

extern "C" __global__ void nosync_add(const float* a, const float* b, float* out, unsigned int n) {
    GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

extern "C" __global__ void nosync_mul(const float* a, const float* b, float* out, unsigned int n) {
    GRID_STRIDE(i, n) out[i] = a[i] * b[i];
}

// One block of RED_THREADS threads: a fixed summation order, so results are deterministic.
__device__ float block_reduce_sum(float acc) {
    __shared__ float s[RED_THREADS];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    return s[0];
}

extern "C" __global__ void nosync_sum(const float* x, float* out, unsigned int n) {
    float acc = 0.0f;
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
    float total = block_reduce_sum(acc);
    if (threadIdx.x == 0) out[0] = total;
}

extern "C" __global__ void nosync_dot(const float* x, const float* y, float* out, unsigned int n) {
    float acc = 0.0f;
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) acc += x[i] * y[i];
    float total = block_reduce_sum(acc);
    if (threadIdx.x == 0) out[0] = total;
}

__device__ bool better(float v, unsigned int i, float bv, unsigned int bi) {
    if (i == NO_INDEX) return false;
    if (bi == NO_INDEX) return true;
    return v > bv || (v == bv && i < bi);
}

extern "C" __global__ void nosync_argmax(const float* x, unsigned int* out, unsigned int n) {
    __shared__ float sv[RED_THREADS];
    __shared__ unsigned int si[RED_THREADS];
    float best = 0.0f;
    unsigned int bi = NO_INDEX;
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) {
        float v = x[i];
        if (v == v && better(v, i, best, bi)) { best = v; bi = i; }
    }
    sv[threadIdx.x] = best;
    si[threadIdx.x] = bi;
    __syncthreads();
    for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w && better(sv[threadIdx.x + w], si[threadIdx.x + w], sv[threadIdx.x], si[threadIdx.x])) {
            sv[threadIdx.x] = sv[threadIdx.x + w];
            si[threadIdx.x] = si[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = si[0];
}

// Busy-waits for `ns` nanoseconds of the device's global timer.
extern "C" __global__ void nosync_spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
