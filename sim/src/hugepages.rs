//! Large arrays on huge pages (Linux), so that random accesses to them miss the TLB less.
//!
//! A job with a million channels keeps their state in one 64 MiB array, and nearly every event
//! touches a line of it at random: on 4 KiB pages that is sixteen thousand pages, far more than
//! the processor's TLB holds, so nearly every such access first walks the page table (`perf`
//! put the largest share of a p = 1000 run on the prefetch of that line). On 2 MiB pages the
//! array spans 32 entries. Many machines give transparent huge pages only to memory that asks
//! for them (`madvise` in `/sys/kernel/mm/transparent_hugepage/enabled`); this asks, for the
//! few arrays that are large, fully used and allocated once. It is not applied to every
//! allocation: glibc's `glibc.malloc.hugetlb=1` does that, and the pages it faults and clears
//! for vectors that grow and are freed cost more system time than the TLB saves.
//!
//! The advice changes where memory sits, never what a program computes: a run is the same
//! with it, without it, and on systems that ignore it.

/// Arrays smaller than this stay as they are: they span few pages anyway.
const MIN_BYTES: usize = 4 << 20;

/// An empty vector with room for `capacity` elements, whose memory the kernel is asked to back
/// with transparent huge pages when it is large. Ask before the first write (filling the
/// vector): pages faulted in before the advice stay small.
pub fn vec<T>(capacity: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(capacity);
    advise(v.as_ptr().cast(), capacity * std::mem::size_of::<T>());
    v
}

#[cfg(target_os = "linux")]
fn advise(start: *const u8, bytes: usize) {
    if bytes < MIN_BYTES {
        return;
    }
    // madvise wants a page-aligned start; the whole pages inside the allocation are advised.
    let page = 4096;
    let from = (start as usize).next_multiple_of(page);
    let to = (start as usize + bytes) & !(page - 1);
    // SAFETY: the range lies inside one live allocation of ours, and MADV_HUGEPAGE only
    // changes how the kernel backs it, not its contents or mapping; a failure (a kernel
    // without transparent huge pages) leaves the memory as it was, so the result is ignored.
    unsafe {
        libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: *const u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    #[test]
    fn the_vector_has_its_capacity_and_works_as_any_other() {
        for capacity in [0, 10, (8 << 20) / 8] {
            let mut v: Vec<u64> = super::vec(capacity);
            assert!(v.capacity() >= capacity);
            v.extend(0..capacity as u64);
            assert_eq!(v.iter().sum::<u64>(), (0..capacity as u64).sum());
        }
    }
}
