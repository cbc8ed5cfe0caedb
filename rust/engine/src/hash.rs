//! 64-bit mixing, for hash keys and for seeds derived from seeds. A leaf: the position's hash
//! keys and the random playouts both use it, and it uses nothing of the engine.

/// SplitMix64's output function: a strong 64-bit mix (hash keys, seeds derived from seeds).
#[inline]
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
