//! `cargo bench --bench model`: the full model on the 100-subtask jobs, and allocations per event.

mod suite;

#[global_allocator]
static ALLOCATOR: suite::alloc::Counting = suite::alloc::Counting;

fn main() {
    let mut table = suite::Table::default();
    suite::model::rows(&mut table);
    table.print();
}
