//! The bench's statistics: medians with distribution-free 95 % intervals.

/// A median and its 95 % interval.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Estimate {
    pub(crate) median: f64,
    pub(crate) low: f64,
    pub(crate) high: f64,
}

impl Estimate {
    /// `+12.3 [+10.1, +14.0]`, each figure scaled by `scale`, with `digits` decimals.
    pub(crate) fn show(&self, scale: f64, digits: usize) -> String {
        let f = |x: f64| format!("{:+.*}", digits, x * scale);
        format!("{} [{}, {}]", f(self.median), f(self.low), f(self.high))
    }
}

pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The median of `v` with the order statistics that bound it with 95 % confidence whatever the
/// distribution (the ranks from the binomial(n, 1/2), by its normal approximation; n >= 6).
pub(crate) fn median_interval(mut v: Vec<f64>) -> Estimate {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let k = ((n as f64 - 1.96 * (n as f64).sqrt()) / 2.0)
        .floor()
        .max(0.0) as usize;
    Estimate {
        low: v[k.min(n - 1)],
        high: v[(n - 1).saturating_sub(k)],
        median: median(v),
    }
}

/// The difference of the medians of two independent samples, `after - before`, with a 95 %
/// percentile bootstrap interval (2000 resamples, a fixed seed: the same data, the same interval).
pub(crate) fn median_shift(before: &[f64], after: &[f64]) -> Estimate {
    let mut rng = SplitMix(0x6e6f_7379_6e63);
    let mut resample = |v: &[f64]| median((0..v.len()).map(|_| v[rng.below(v.len())]).collect());
    let mut shifts: Vec<f64> = (0..2000)
        .map(|_| resample(after) - resample(before))
        .collect();
    shifts.sort_by(f64::total_cmp);
    Estimate {
        median: median(after.to_vec()) - median(before.to_vec()),
        low: shifts[49],
        high: shifts[1949],
    }
}

/// SplitMix64: enough randomness for a bootstrap, and no dependency.
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}
