//! Gradient descent on a least-squares problem, all on the device: the train_loop example's
//! model, shared with `benches/gpu.rs`.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use nosync::gpu::{
    DeviceBuffer, Error, Gpu, Kernel, Kernels, LaunchConfig, Module, PinnedBuffer, Stream,
};
use nosync::no_sync;

const SRC: &str = r#"
// r = A x - b (A is m x n, row-major): one warp per row
extern "C" __global__ void residual(const float* A, const float* x, const float* b, float* r,
                                    unsigned int m, unsigned int n) {
    unsigned int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (row >= m) return;
    float acc = 0.0f;
    for (unsigned int j = lane; j < n; j += 32) acc += A[row * n + j] * x[j];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (lane == 0) r[row] = acc - b[row];
}
// g = scale * A^T r: one block of 256 threads per column
extern "C" __global__ void gradient(const float* A, const float* r, float* g,
                                    unsigned int m, unsigned int n, float scale) {
    __shared__ float s[256];
    unsigned int j = blockIdx.x;
    float acc = 0.0f;
    for (unsigned int i = threadIdx.x; i < m; i += blockDim.x) acc += A[i * n + j] * r[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) g[j] = scale * s[0];
}
"#;

/// The problem and the optimiser's state, all in device memory.
pub(crate) struct Model {
    pub stream: Stream,
    kernels: Arc<Kernels>,
    residual: Kernel,
    gradient: Kernel,
    _module: Module,
    m: u32,
    n: u32,
    lr: f32,
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    x: DeviceBuffer<f32>,
    r: DeviceBuffer<f32>,
    g: DeviceBuffer<f32>,
    /// `Σ r²`, left on the device by the dot kernel.
    sq: DeviceBuffer<f32>,
}

/// `count` blocks of 256 threads.
fn blocks(count: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (count, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn lcg(seed: &mut u64) -> f32 {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((*seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

impl Model {
    /// Setup (blocks: compiles, uploads): `m` samples of `n` features, `b = A x*`.
    pub(crate) fn new(gpu: &Gpu, m: usize, n: usize) -> Result<Model, Error> {
        let mut seed = 42;
        let a: Vec<f32> = (0..m * n).map(|_| lcg(&mut seed)).collect();
        let truth: Vec<f32> = (0..n).map(|_| lcg(&mut seed)).collect();
        let b: Vec<f32> = a
            .chunks(n)
            .map(|row| row.iter().zip(&truth).map(|(p, q)| p * q).sum())
            .collect();
        let stream = gpu.default_stream();
        let module = Module::compile(gpu, "least_squares", SRC)?;
        Ok(Model {
            kernels: gpu.kernels()?,
            residual: module.kernel("residual")?,
            gradient: module.kernel("gradient")?,
            _module: module,
            m: m as u32,
            n: n as u32,
            lr: 1.0,
            a: stream.from_host(&a)?,
            b: stream.from_host(&b)?,
            x: stream.alloc_zeros(n)?,
            r: stream.alloc_zeros(m)?,
            g: stream.alloc_zeros(n)?,
            sq: stream.alloc_zeros(1)?,
            stream,
        })
    }

    /// Enqueues one gradient-descent update and the loss reduction; never waits.
    fn enqueue_step(&mut self) -> Result<(), Error> {
        let (s, m, n) = (&self.stream, self.m, self.n);
        let scale = 1.0 / m as f32;
        // SAFETY: the arguments match `residual` and `gradient` in kernels above; both check
        // their index against m or n.
        unsafe {
            s.launch(&self.residual)
                .arg(&self.a)
                .arg(&self.x)
                .arg(&self.b)
                .arg(&mut self.r)
                .arg(&m)
                .arg(&n)
                .launch(blocks(m.div_ceil(8)))?;
            s.launch(&self.gradient)
                .arg(&self.a)
                .arg(&self.r)
                .arg(&mut self.g)
                .arg(&m)
                .arg(&n)
                .arg(&scale)
                .launch(blocks(n))?;
        }
        self.kernels.dot(s, &self.r, &self.r, &mut self.sq)?;
        self.kernels.axpy(s, -self.lr, &self.g, &mut self.x)
    }

    /// The loss from `Σ r²`.
    pub(crate) fn loss_of(&self, sum_sq: f32) -> f32 {
        0.5 * sum_sq / self.m as f32
    }

    /// One training step that reads the loss back every iteration: the hidden sync.
    #[no_sync]
    pub fn train_step(&mut self) -> Result<f32, Error> {
        self.enqueue_step()?;
        let sum_sq = self.sq.to_vec()?[0]; // device->host into a Vec: waits for the stream
        Ok(self.loss_of(sum_sq))
    }

    /// The fixed step: the loss stays on the device. Every `every` steps the copy issued `every`
    /// steps earlier is read if it has landed (never waiting), and a new one is issued into the
    /// pinned buffer. Returns `(iteration, loss)` when it read one.
    #[no_sync]
    pub fn train_step_fixed(
        &mut self,
        it: usize,
        every: usize,
        pinned: &mut PinnedBuffer<f32>,
        issued: &mut Option<usize>,
    ) -> Result<Option<(usize, f32)>, Error> {
        self.enqueue_step()?;
        if !it.is_multiple_of(every) {
            return Ok(None);
        }
        let mut seen = None;
        if let Some(at) = *issued {
            match pinned.try_read()? {
                Some(v) => seen = Some((at, self.loss_of(v[0]))),
                None => return Ok(None), // still in flight: try again `every` steps later
            }
        }
        self.sq.to_host_async(pinned)?;
        *issued = Some(it);
        Ok(seen)
    }
}

/// Which step the loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    Hidden,
    Fixed,
}

/// Runs `iters` steps; returns the last loss seen and the wall time (the stream drained).
pub(crate) fn run(
    model: &mut Model,
    variant: Variant,
    iters: usize,
    every: usize,
    mut on_loss: impl FnMut(usize, f32),
) -> Result<(f32, Duration), Error> {
    let gpu = model.stream.gpu().clone();
    let mut pinned = PinnedBuffer::<f32>::new(&gpu, 1)?;
    model.stream.synchronize()?;
    let t0 = Instant::now();
    let mut last = f32::NAN;
    let mut issued = None;
    for it in 0..iters {
        let seen = match variant {
            Variant::Hidden => Some((it, model.train_step()?)),
            Variant::Fixed => model.train_step_fixed(it, every, &mut pinned, &mut issued)?,
        };
        if let Some((at, loss)) = seen {
            on_loss(at, loss);
            last = loss;
        }
    }
    model.stream.synchronize()?;
    let elapsed = t0.elapsed();
    if variant == Variant::Fixed {
        model.sq.to_host_async(&mut pinned)?;
        last = model.loss_of(pinned.read()?[0]);
    }
    Ok((last, elapsed))
}
