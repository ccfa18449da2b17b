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

    /// `dst = src + Σ rows of adds − Σ rows of subs`, where row `r` is
    /// `table[r · n .. (r + 1) · n]` and `n = dst.len() = src.len()`. The rows are named by
    /// index, not passed as slices: a list of up to 64 fat pointers built per update and moved
    /// around cost more than the additions (measured: `ArrayVec` collection and its memmove
    /// were 10 % of an alpha-beta profile).
    ///
    /// Panics if a row lies outside `table` (the accumulator only asks for inputs < 768).
    #[inline]
    pub fn update(
        self,
        dst: &mut [Lane],
        src: &[Lane],
        table: &[Lane],
        adds: &[u16],
        subs: &[u16],
    ) {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Kernel::Avx2` is only ever made by `detect` (or `or_supported`), after
            // `is_x86_feature_detected!("avx2")` said this machine has AVX2.
            Kernel::Avx2 => unsafe { avx2::update(dst, src, table, adds, subs) },
            _ => scalar::update(dst, src, table, adds, subs),
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

    pub(super) fn update(
        dst: &mut [Lane],
        src: &[Lane],
        table: &[Lane],
        adds: &[u16],
        subs: &[u16],
    ) {
        let n = dst.len();
        dst.copy_from_slice(src);
        for &r in adds {
            let row = &table[usize::from(r) * n..][..n];
            for (d, w) in dst.iter_mut().zip(row) {
                for (x, y) in d.0.iter_mut().zip(w.0) {
                    *x = x.wrapping_add(y);
                }
            }
        }
        for &r in subs {
            let row = &table[usize::from(r) * n..][..n];
            for (d, w) in dst.iter_mut().zip(row) {
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

    /// Lanes kept in registers at once: 8 of AVX2's 16, the rest hold the row's loads.
    const TILE: usize = 8;

    #[target_feature(enable = "avx2")]
    pub(super) fn update(
        dst: &mut [Lane],
        src: &[Lane],
        table: &[Lane],
        adds: &[u16],
        subs: &[u16],
    ) {
        let n = dst.len();
        let mut start = 0;
        while start + TILE <= n {
            tile::<TILE>(dst, src, table, adds, subs, start);
            start += TILE;
        }
        while start < n {
            tile::<1>(dst, src, table, adds, subs, start);
            start += 1;
        }
    }

    /// Lanes `start .. start + L`: loaded once, every row added or subtracted in registers,
    /// stored once (each row's slice is bounds-checked once per tile, not per lane).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn tile<const L: usize>(
        dst: &mut [Lane],
        src: &[Lane],
        table: &[Lane],
        adds: &[u16],
        subs: &[u16],
        start: usize,
    ) {
        let n = dst.len();
        let src: &[Lane; L] = src[start..start + L].try_into().expect("L lanes");
        let mut regs = [_mm256_setzero_si256(); L];
        for (r, s) in regs.iter_mut().zip(src) {
            *r = load(s);
        }
        for &a in adds {
            let row: &[Lane; L] = table[usize::from(a) * n + start..][..L]
                .try_into()
                .expect("L lanes");
            for (r, w) in regs.iter_mut().zip(row) {
                *r = _mm256_add_epi16(*r, load(w));
            }
        }
        for &a in subs {
            let row: &[Lane; L] = table[usize::from(a) * n + start..][..L]
                .try_into()
                .expect("L lanes");
            for (r, w) in regs.iter_mut().zip(row) {
                *r = _mm256_sub_epi16(*r, load(w));
            }
        }
        let out: &mut [Lane; L] = (&mut dst[start..start + L]).try_into().expect("L lanes");
        for (d, r) in out.iter_mut().zip(regs) {
            store(d, r);
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
        for (n, seed) in [(1usize, 1u64), (2, 2), (9, 6), (16, 3), (64, 4), (128, 5)] {
            let src = lanes(n, seed, 3000);
            // A table of 7 rows; rows named out of order and one twice.
            let table = lanes(7 * n, seed * 10, 2000);
            let (adds, subs) = ([3u16, 0, 6, 3], [5u16, 1]);
            let mut a = vec![Lane::default(); n];
            let mut b = vec![Lane::default(); n];
            Kernel::Scalar.update(&mut a, &src, &table, &adds, &subs);
            simd.update(&mut b, &src, &table, &adds, &subs);
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
