//! What both walkers share: the depth they hash and the hash itself.

/// Frames hashed at most: deep enough to tell call sites apart, bounded in cost.
pub(super) const DEPTH: usize = 48;

/// The offset basis of the hash (FNV-1a's).
pub(super) const SEED: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over the address's bytes, one word at a time.
pub(super) fn mix(hash: u64, word: u64) -> u64 {
    (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3)
}
