//! A stable running hash of a run's trace.
//!
//! Two runs with the same inputs must produce the same trace, byte for byte; comparing one
//! 64-bit hash is the cheap way to check that (across machines, across releases, in golden
//! tests). So the hash must never change on its own: it cannot be `DefaultHasher` (whose
//! algorithm Rust may change) nor anything that depends on the platform. It is a fixed algorithm,
//! specified here completely enough to re-implement:
//!
//! - **State**: one `u64`, initially `0x243f_6a88_85a3_08d3` (the first 64 bits of the
//!   fraction of pi, a constant with nothing up its sleeve; a non-zero start keeps leading zero
//!   words from vanishing).
//! - **`write_u64(w)`** (the FxHash step): `h = (h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95)`.
//! - **`write_i64(v)`**: `write_u64(v as u64)` (two's complement).
//! - **`write_bool(b)`**: `write_u64(1)` for true, `write_u64(0)` for false.
//! - **`write_str(s)`**: `write_u64(len)` with the length in bytes of the UTF-8 encoding, then
//!   the bytes in chunks of 8, each read as a little-endian `u64` and passed to `write_u64`; the
//!   last chunk, if shorter than 8 bytes, is padded with zero bytes. The empty string writes
//!   only its length. Writing the length first means `"ab", "c"` and `"a", "bc"` differ.
//! - **`finish()`**: the MurmurHash3 `fmix64` finalizer applied to a copy of the state:
//!   `k ^= k >> 33; k = k.wrapping_mul(0xff51_afd7_ed55_8ccd); k ^= k >> 33;`
//!   `k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53); k ^= k >> 33`. The state is unchanged, so a
//!   hash can be read mid-run and writing can go on.
//!
//! The hash is fast and spreads differences well, but it is not collision-resistant against an
//! adversary: it detects divergence between runs, it does not authenticate them.

/// The running hash (see the module docs for the exact algorithm).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHasher {
    state: u64,
}

impl TraceHasher {
    const INITIAL_STATE: u64 = 0x243f_6a88_85a3_08d3;
    const MULTIPLIER: u64 = 0x517c_c1b7_2722_0a95;

    pub fn new() -> TraceHasher {
        TraceHasher {
            state: Self::INITIAL_STATE,
        }
    }

    #[inline]
    pub fn write_u64(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(Self::MULTIPLIER);
    }

    #[inline]
    pub fn write_i64(&mut self, value: i64) {
        self.write_u64(value as u64);
    }

    #[inline]
    pub fn write_bool(&mut self, value: bool) {
        self.write_u64(u64::from(value));
    }

    pub fn write_str(&mut self, text: &str) {
        let bytes = text.as_bytes();
        self.write_u64(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word: [u8; 8] = chunk.try_into().expect("chunks_exact yields 8 bytes");
            self.write_u64(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    /// The hash of everything written so far.
    pub fn finish(&self) -> u64 {
        let mut k = self.state;
        k ^= k >> 33;
        k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
        k ^= k >> 33;
        k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        k ^= k >> 33;
        k
    }
}

impl Default for TraceHasher {
    fn default() -> TraceHasher {
        TraceHasher::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(write: impl FnOnce(&mut TraceHasher)) -> u64 {
        let mut hasher = TraceHasher::new();
        write(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn golden_values() {
        // Computed once from the algorithm in the module docs; a change here changes every
        // recorded trace hash.
        assert_eq!(hash(|_| {}), 0x7acd_bb98_b134_4213);
        assert_eq!(
            hash(|h| {
                h.write_u64(1);
                h.write_u64(2);
                h.write_u64(3);
            }),
            0xc303_3ffe_cd61_aad4
        );
        assert_eq!(hash(|h| h.write_str("")), 0x0f84_4373_0f99_d79a);
        assert_eq!(
            hash(|h| h.write_str("checkpoint 7 completed")),
            0x472b_0ff6_a7cb_e365
        );
        assert_eq!(
            hash(|h| {
                h.write_i64(-1);
                h.write_bool(true);
            }),
            0x5e22_8362_fe99_f097
        );
    }

    #[test]
    fn strings_are_length_prefixed_words_zero_padded() {
        let by_hand = hash(|h| {
            h.write_u64(9);
            h.write_u64(u64::from_le_bytes(*b"barrier "));
            h.write_u64(u64::from(b'7'));
        });
        assert_eq!(hash(|h| h.write_str("barrier 7")), by_hand);
        assert_ne!(
            hash(|h| {
                h.write_str("ab");
                h.write_str("c");
            }),
            hash(|h| {
                h.write_str("a");
                h.write_str("bc");
            })
        );
    }

    #[test]
    fn order_matters_and_finish_does_not_consume() {
        let mut hasher = TraceHasher::new();
        hasher.write_u64(1);
        let partial = hasher.finish();
        assert_eq!(hasher.finish(), partial);
        hasher.write_u64(2);
        assert_ne!(hasher.finish(), partial);
        assert_ne!(
            hasher.finish(),
            hash(|h| {
                h.write_u64(2);
                h.write_u64(1);
            })
        );
        assert_eq!(hash(|h| h.write_i64(-1)), hash(|h| h.write_u64(u64::MAX)));
        assert_eq!(hash(|h| h.write_bool(true)), hash(|h| h.write_u64(1)));
        assert_ne!(
            hash(|_| {}),
            hash(|h| h.write_u64(0)),
            "a zero word still counts"
        );
    }
}
