//! `cargo bench --bench kernel`: the kernel's hold model against a bare heap and nexosim.

mod suite;

#[global_allocator]
static ALLOCATOR: suite::alloc::Counting = suite::alloc::Counting;

fn main() {
    let mut table = suite::Table::default();
    suite::kernel::rows(&mut table);
    table.print();
}
