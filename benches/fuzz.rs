//! `cargo bench --bench fuzz`: generated scenarios per second per thread.

mod suite;

#[global_allocator]
static ALLOCATOR: suite::alloc::Counting = suite::alloc::Counting;

fn main() {
    let mut table = suite::Table::default();
    suite::fuzz::rows(&mut table);
    table.print();
}
