//! The two hot loops of the network, in a portable scalar version and an AVX2 version chosen
//! at run time (the Docker image must run on any x86-64): the accumulator update (a copy plus
//! some weight rows added and some subtracted) and the output layer's SCReLU dot product.
//!
//! Both versions compute the same integers: 16-bit accumulators with wrapping additions, the
//! clipped activation times the weight in 16 bits (the loader makes sure it fits), times the
//! activation again into 32 bits, summed with wrapping 32-bit additions (which do not depend on
//! the order of the terms).

/// Values per lane: 16 × i16 = 256 bits, one AVX2 register.
pub const LANE: usize = 16;

/// Sixteen 16-bit values, aligned for a 256-bit load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Lane(pub [i16; LANE]);

/// Which implementation of the kernels runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Portable Rust (any machine).
    Scalar,
    /// AVX2 (x86-64 with AVX2, detected at run time).
    Avx2,
}

impl Kernel {
    /// The best kernels this machine runs.
    pub fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Kernel::Avx2;
        }
        Kernel::Scalar
    }

    /// `self` if this machine runs it, else the scalar kernels.
    pub fn or_supported(self) -> Kernel {
        match self {
            Kernel::Avx2 if Kernel::detect() == Kernel::Avx2 => Kernel::Avx2,
            _ => Kernel::Scalar,
        }
    }

    /// Its name, as `bench` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
        }
    }

    /// `dst = src + Σ rows of adds − Σ rows of subs`, every slice `dst.len()` lanes long.
    #[inline]
    pub fn update(self, dst: &mut [Lane], src: &[Lane], adds: &[&[Lane]], subs: &[&[Lane]]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Kernel::Avx2` is only ever made by `detect` (or `or_supported`), after
            // `is_x86_feature_detected!("avx2")` said this machine has AVX2.
            Kernel::Avx2 => unsafe { avx2::update(dst, src, adds, subs) },
            _ => scalar::update(dst, src, adds, subs),
        }
    }

    /// `Σ clip(us)·w·clip(us) + Σ clip(them)·w'·clip(them)` with `clip(x) = clamp(x, 0, qa)`,
    /// where `weights` holds `w` (as many lanes as `us`) then `w'`.
    #[inline]
    pub fn output(self, us: &[Lane], them: &[Lane], weights: &[Lane], qa: i16) -> i32 {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `update`: only made when the machine has AVX2.
            Kernel::Avx2 => unsafe { avx2::output(us, them, weights, qa) },
            _ => scalar::output(us, them, weights, qa),
        }
    }
}

mod scalar {
    use super::Lane;

    pub(super) fn update(dst: &mut [Lane], src: &[Lane], adds: &[&[Lane]], subs: &[&[Lane]]) {
        dst.copy_from_slice(src);
        for row in adds {
            for (d, w) in dst.iter_mut().zip(row.iter()) {
                for (x, y) in d.0.iter_mut().zip(w.0) {
                    *x = x.wrapping_add(y);
                }
            }
        }
        for row in subs {
            for (d, w) in dst.iter_mut().zip(row.iter()) {
                for (x, y) in d.0.iter_mut().zip(w.0) {
                    *x = x.wrapping_sub(y);
                }
            }
        }
    }

    pub(super) fn output(us: &[Lane], them: &[Lane], weights: &[Lane], qa: i16) -> i32 {
        let mut sum = 0i32;
        for (x, w) in us.iter().chain(them).zip(weights) {
            for (&x, &w) in x.0.iter().zip(&w.0) {
                let v = x.clamp(0, qa);
                let vw = v.wrapping_mul(w);
                sum = sum.wrapping_add(i32::from(vw) * i32::from(v));
            }
        }
        sum
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi16, _mm256_add_epi32, _mm256_load_si256, _mm256_madd_epi16,
        _mm256_max_epi16, _mm256_min_epi16, _mm256_mullo_epi16, _mm256_set1_epi16,
        _mm256_setzero_si256, _mm256_store_si256, _mm256_storeu_si256, _mm256_sub_epi16,
    };

    use super::Lane;

    /// One lane as a register.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load(lane: &Lane) -> __m256i {
        // SAFETY: a `Lane` is 32 bytes aligned to 32 (`repr(align(32))`), and the reference
        // makes it readable.
        unsafe { _mm256_load_si256(std::ptr::from_ref(lane).cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn store(lane: &mut Lane, v: __m256i) {
        // SAFETY: as in `load`, and the reference is unique and writable.
        unsafe { _mm256_store_si256(std::ptr::from_mut(lane).cast(), v) }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn update(dst: &mut [Lane], src: &[Lane], adds: &[&[Lane]], subs: &[&[Lane]]) {
        for (i, (d, s)) in dst.iter_mut().zip(src).enumerate() {
            let mut acc = load(s);
            for row in adds {
                acc = _mm256_add_epi16(acc, load(&row[i]));
            }
            for row in subs {
                acc = _mm256_sub_epi16(acc, load(&row[i]));
            }
            store(d, acc);
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn output(us: &[Lane], them: &[Lane], weights: &[Lane], qa: i16) -> i32 {
        let zero = _mm256_setzero_si256();
        let top = _mm256_set1_epi16(qa);
        let mut sum = zero;
        for (x, w) in us.iter().chain(them).zip(weights) {
            let v = _mm256_min_epi16(_mm256_max_epi16(load(x), zero), top);
            let vw = _mm256_mullo_epi16(v, load(w));
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(vw, v));
        }
        let mut parts = [0i32; 8];
        // SAFETY: `parts` is 32 writable bytes; the unaligned store needs no alignment.
        unsafe { _mm256_storeu_si256(parts.as_mut_ptr().cast(), sum) };
        parts.iter().fold(0i32, |a, &b| a.wrapping_add(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(n: usize, seed: u64, range: i64) -> Vec<Lane> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                let mut l = Lane::default();
                for x in &mut l.0 {
                    s = s.wrapping_add(crate::search::GOLDEN_GAMMA);
                    *x = (crate::search::mix64(s) % (2 * range as u64 + 1)) as i64 as i16
                        - range as i16;
                }
                l
            })
            .collect()
    }

    #[test]
    fn the_simd_kernels_compute_the_scalar_integers() {
        if Kernel::detect() == Kernel::Scalar {
            eprintln!("no SIMD kernels on this machine: nothing to compare");
            return;
        }
        let simd = Kernel::detect();
        for (n, seed) in [(1usize, 1u64), (2, 2), (16, 3), (64, 4), (128, 5)] {
            let src = lanes(n, seed, 3000);
            let rows: Vec<Vec<Lane>> = (0..6).map(|r| lanes(n, seed * 10 + r, 2000)).collect();
            let adds: Vec<&[Lane]> = rows[..4].iter().map(Vec::as_slice).collect();
            let subs: Vec<&[Lane]> = rows[4..].iter().map(Vec::as_slice).collect();
            let mut a = vec![Lane::default(); n];
            let mut b = vec![Lane::default(); n];
            Kernel::Scalar.update(&mut a, &src, &adds, &subs);
            simd.update(&mut b, &src, &adds, &subs);
            assert_eq!(a, b, "update, {n} lanes");
            assert_ne!(a, src, "the rows changed something");
            // Activations over the whole range (negative, inside, above qa); weights at the
            // bound the loader allows.
            let them = lanes(n, seed + 99, 400);
            let weights = lanes(2 * n, seed + 7, 128);
            let s = Kernel::Scalar.output(&src, &them, &weights, 255);
            assert_eq!(
                s,
                simd.output(&src, &them, &weights, 255),
                "output, {n} lanes"
            );
            assert_eq!(
                Kernel::Scalar.output(&a, &them, &weights, 181),
                simd.output(&a, &them, &weights, 181)
            );
        }
    }

    #[test]
    fn the_scalar_output_is_the_screlu_dot_product() {
        let mut us = Lane::default();
        us.0[0] = 10;
        us.0[1] = -5;
        us.0[2] = 300;
        let mut them = Lane::default();
        them.0[3] = 2;
        let mut w = [Lane::default(); 2];
        w[0].0[0] = 3;
        w[0].0[1] = 100;
        w[0].0[2] = -1;
        w[1].0[3] = 7;
        // 10²·3 + 0 + 255²·(−1) + 2²·7
        let want = 300 - 65_025 + 28;
        assert_eq!(Kernel::Scalar.output(&[us], &[them], &w, 255), want);
        assert_eq!(Kernel::detect().output(&[us], &[them], &w, 255), want);
    }
}
