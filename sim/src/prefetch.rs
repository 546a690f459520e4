//! A hint to the processor to start loading a value into the cache (for [`crate::Model::prefetch`]).
//!
//! A model with millions of channels touches a cache line of state nobody touched recently in
//! almost every event, and a miss costs as much as handling a small event. Asked two events
//! ahead, the load overlaps the work of the events before it. The hint has no effect on what a program
//! computes: no memory is written, a wrong address is harmless.

/// Asks the processor to load the cache line holding `value`. A no-op on targets without a
/// prefetch instruction we use.
#[inline(always)]
pub fn read<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` reads nothing architecturally and writes nothing; it needs SSE,
    // which every x86_64 processor has (it is in the target's baseline features).
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
