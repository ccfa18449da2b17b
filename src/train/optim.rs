//! AdamW over the flat parameter vector, and the learning-rate schedule.

/// Adam with decoupled weight decay (Loshchilov and Hutter), one moment pair per parameter.
#[derive(Clone, Debug)]
pub struct AdamW {
    m: Vec<f32>,
    v: Vec<f32>,
    steps: i32,
    /// Decay of the first moment.
    pub beta1: f32,
    /// Decay of the second moment.
    pub beta2: f32,
    /// Added to the root of the second moment.
    pub eps: f32,
    /// Decoupled weight decay per unit of learning rate.
    pub decay: f32,
}

impl AdamW {
    /// An optimiser for `n` parameters with the usual constants (0.9, 0.999, 1e-8) and a
    /// weight decay of 0.01.
    pub fn new(n: usize) -> Self {
        AdamW {
            m: vec![0.0; n],
            v: vec![0.0; n],
            steps: 0,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            decay: 0.01,
        }
    }

    /// One step of size `lr` along the averaged gradient `grad`.
    pub fn step(&mut self, params: &mut [f32], grad: &[f32], lr: f32) {
        self.steps += 1;
        let (b1, b2) = (self.beta1, self.beta2);
        let c1 = 1.0 - b1.powi(self.steps);
        let c2 = 1.0 - b2.powi(self.steps);
        let shrink = 1.0 - lr * self.decay;
        for (((p, &g), m), v) in params
            .iter_mut()
            .zip(grad)
            .zip(&mut self.m)
            .zip(&mut self.v)
        {
            *m = b1 * *m + (1.0 - b1) * g;
            *v = b2 * *v + (1.0 - b2) * g * g;
            let m_hat = *m / c1;
            let v_hat = *v / c2;
            *p = *p * shrink - lr * m_hat / (v_hat.sqrt() + self.eps);
        }
    }
}

/// The learning rate at `step` of `total`: cosine decay from `lr` to `lr · FINAL_FRACTION`.
pub fn cosine(lr: f32, step: usize, total: usize) -> f32 {
    let progress = step as f32 / total.max(1) as f32;
    let end = lr * FINAL_FRACTION;
    end + 0.5 * (lr - end) * (1.0 + (std::f32::consts::PI * progress).cos())
}

/// The learning rate at the end of training, as a fraction of the first.
pub const FINAL_FRACTION: f32 = 0.01;
