//! The built-in kernels: enough for realistic hot loops with nosync alone. All `f32`, all
//! enqueue-only (they never make the host wait); reductions leave their result on the device.

use std::time::Duration;

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{DeviceBuffer, Error, Kernel, Kernels, Stream};

const BLOCK: u32 = 256;
const MAX_BLOCKS: u32 = 4096;
/// Must equal `RED_THREADS` in kernels.cu.
const REDUCE_THREADS: u32 = 1024;

fn elementwise(n: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(BLOCK).clamp(1, MAX_BLOCKS), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn single_block() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (REDUCE_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn count(op: &'static str, len: usize) -> Result<u32, Error> {
    u32::try_from(len).map_err(|_| Error::usage(op, format!("{len} elements exceed u32::MAX")))
}

fn same_len(op: &'static str, a: usize, b: usize) -> Result<u32, Error> {
    if a != b {
        return Err(Error::usage(op, format!("lengths differ: {a} and {b}")));
    }
    count(op, a)
}

fn scalar_out<T>(op: &'static str, out: &DeviceBuffer<T>) -> Result<(), Error> {
    if out.is_empty() {
        return Err(Error::usage(
            op,
            "the output buffer is empty; it needs one element",
        ));
    }
    Ok(())
}

impl Kernels {
    /// `x[i] = value`.
    pub fn fill(&self, s: &Stream, x: &mut DeviceBuffer<f32>, value: f32) -> Result<(), Error> {
        let n = count("Kernels::fill", x.len())?;
        let mut l = s.launch(&self.fill);
        l.arg(x).arg(&value).arg(&n);
        // SAFETY: matches `nosync_fill(float*, float, unsigned)`; the kernel stays below n.
        unsafe { l.launch(elementwise(n)) }
    }

    /// `x[i] *= a`.
    pub fn scale(&self, s: &Stream, x: &mut DeviceBuffer<f32>, a: f32) -> Result<(), Error> {
        let n = count("Kernels::scale", x.len())?;
        let mut l = s.launch(&self.scale);
        l.arg(x).arg(&a).arg(&n);
        // SAFETY: matches `nosync_scale(float*, float, unsigned)`.
        unsafe { l.launch(elementwise(n)) }
    }

    /// `y[i] += a * x[i]`.
    pub fn axpy(
        &self,
        s: &Stream,
        a: f32,
        x: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        let n = same_len("Kernels::axpy", x.len(), y.len())?;
        let mut l = s.launch(&self.axpy);
        l.arg(&a).arg(x).arg(y).arg(&n);
        // SAFETY: matches `nosync_axpy(float, const float*, float*, unsigned)`.
        unsafe { l.launch(elementwise(n)) }
    }

    /// `out[i] = a[i] + b[i]`.
    pub fn add(
        &self,
        s: &Stream,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        out: &mut DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        self.binary(&self.add, "Kernels::add", s, a, b, out)
    }

    /// `out[i] = a[i] * b[i]`.
    pub fn mul(
        &self,
        s: &Stream,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        out: &mut DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        self.binary(&self.mul, "Kernels::mul", s, a, b, out)
    }

    fn binary(
        &self,
        k: &Kernel,
        op: &'static str,
        s: &Stream,
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        out: &mut DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        same_len(op, a.len(), b.len())?;
        let n = same_len(op, a.len(), out.len())?;
        let mut l = s.launch(k);
        l.arg(a).arg(b).arg(out).arg(&n);
        // SAFETY: matches `(const float*, const float*, float*, unsigned)`.
        unsafe { l.launch(elementwise(n)) }
    }

    /// `out[0] = Σ x[i]` (deterministic: one block, fixed order), left on the device.
    pub fn sum(
        &self,
        s: &Stream,
        x: &DeviceBuffer<f32>,
        out: &mut DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        scalar_out("Kernels::sum", out)?;
        let n = count("Kernels::sum", x.len())?;
        let mut l = s.launch(&self.sum);
        l.arg(x).arg(out).arg(&n);
        // SAFETY: matches `nosync_sum(const float*, float*, unsigned)`; out has an element.
        unsafe { l.launch(single_block()) }
    }

    /// `out[0] = Σ x[i] * y[i]` (deterministic), left on the device.
    pub fn dot(
        &self,
        s: &Stream,
        x: &DeviceBuffer<f32>,
        y: &DeviceBuffer<f32>,
        out: &mut DeviceBuffer<f32>,
    ) -> Result<(), Error> {
        scalar_out("Kernels::dot", out)?;
        let n = same_len("Kernels::dot", x.len(), y.len())?;
        let mut l = s.launch(&self.dot);
        l.arg(x).arg(y).arg(out).arg(&n);
        // SAFETY: matches `nosync_dot(const float*, const float*, float*, unsigned)`.
        unsafe { l.launch(single_block()) }
    }

    /// `out[0]` = the index of the largest `x[i]` (the first one on ties, NaN ignored;
    /// `u32::MAX` when `x` is empty or all NaN), left on the device.
    pub fn argmax(
        &self,
        s: &Stream,
        x: &DeviceBuffer<f32>,
        out: &mut DeviceBuffer<u32>,
    ) -> Result<(), Error> {
        scalar_out("Kernels::argmax", out)?;
        let n = count("Kernels::argmax", x.len())?;
        let mut l = s.launch(&self.argmax);
        l.arg(x).arg(out).arg(&n);
        // SAFETY: matches `nosync_argmax(const float*, unsigned*, unsigned)`.
        unsafe { l.launch(single_block()) }
    }

    /// Keeps one GPU thread busy for `duration` (measured with the device's `%globaltimer`):
    /// queued work for testing whether an operation waits. Returns at once.
    pub fn spin(&self, s: &Stream, duration: Duration) -> Result<(), Error> {
        let ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        let mut l = s.cuda_stream().launch_builder(self.spin.cuda_function());
        l.arg(&ns);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: matches `nosync_spin(unsigned long long)`.
        unsafe { l.launch(cfg) }?;
        Ok(())
    }
}
