//! Random draws at the root: the Dirichlet noise mixed into a PUCT root's priors, sampled in
//! log space, and the uniform draw in (0, 1] that the Gumbel root's noise takes too.

use super::tree::Search;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

impl Search {
    /// Mixes Dirichlet noise into the root priors (so self-play explores).
    pub(super) fn add_root_noise(&mut self, rng: &mut ChaCha8Rng) {
        self.root_noised = true;
        let root = self.nodes[0];
        let fraction = self.config.dirichlet_fraction;
        if fraction <= 0.0 || root.len < 2 {
            return;
        }
        let range = root.edges as usize..(root.edges + root.len) as usize;
        let scale = root.scale;
        // Sampled in log space: with alpha ~ 0.03 most gamma draws underflow an f64.
        let alpha = self.config.dirichlet_alpha.max(1e-6) as f64;
        let logs: Vec<f64> = range.clone().map(|_| ln_gamma_sample(alpha, rng)).collect();
        let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = logs.iter().map(|&l| (l - max).exp()).collect();
        let total: f64 = weights.iter().sum();
        for (edge, w) in self.edges[range].iter_mut().zip(&weights) {
            let prior = edge.prior(scale);
            edge.weight = ((1.0 - fraction as f64) * prior as f64 + fraction as f64 * w / total) as f32;
        }
        self.nodes[0].scale = 1.0;
        // Tried edges stay where they are (all of them are scored); the next untried one is
        // chosen again under the new priors.
        self.nodes[0].sorted = false;
        self.prepare_next(0);
    }
}

/// A uniform draw in (0, 1] (never 0, so its logarithm is finite).
pub(super) fn open_uniform(rng: &mut ChaCha8Rng) -> f64 {
    1.0 - rng.gen::<f64>()
}

/// The logarithm of a Gamma(alpha, 1) draw (Marsaglia and Tsang's method; for alpha < 1 the
/// boost Gamma(alpha) = Gamma(alpha + 1) * U^(1 / alpha), applied in log space).
pub(super) fn ln_gamma_sample(alpha: f64, rng: &mut ChaCha8Rng) -> f64 {
    ln_gamma_draw::<true>(alpha, rng)
}

/// `ln_gamma_sample`, with Marsaglia and Tsang's squeeze before the test on the logarithms or
/// (`SQUEEZE` false: the test's reference) without it.
fn ln_gamma_draw<const SQUEEZE: bool>(alpha: f64, rng: &mut ChaCha8Rng) -> f64 {
    if alpha < 1.0 {
        return ln_gamma_draw::<SQUEEZE>(alpha + 1.0, rng) + open_uniform(rng).ln() / alpha;
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        // Standard normal by Box-Muller.
        let x = (-2.0 * open_uniform(rng).ln()).sqrt() * (std::f64::consts::TAU * rng.gen::<f64>()).cos();
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = open_uniform(rng);
        // The squeeze implies the test on the logarithms (their bounds differ by about
        // 0.02 x^4), so it accepts the same draws, most without two logarithms. Rounding could
        // part them only for x within 1e-3 of 0 and u within a few ulps of 1: about 1e-19 a
        // draw (`squeeze_accepts_what_the_logarithms_accept`).
        let x2 = x * x;
        if (SQUEEZE && u < 1.0 - 0.0331 * x2 * x2) || u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return (d * v).ln();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn squeeze_accepts_what_the_logarithms_accept() {
        // The same stream gives the same draws, bit for bit, with and without the squeeze: the
        // root noise (and so every search and dataset) is what it was before it.
        for alpha in [0.03, 0.3, 1.0, 2.5, 40.0] {
            let (mut a, mut b) = (ChaCha8Rng::seed_from_u64(27), ChaCha8Rng::seed_from_u64(27));
            for i in 0..200_000 {
                let (squeezed, logs) = (ln_gamma_draw::<true>(alpha, &mut a), ln_gamma_draw::<false>(alpha, &mut b));
                assert_eq!(squeezed.to_bits(), logs.to_bits(), "alpha {alpha}, draw {i}");
            }
        }
    }
}
