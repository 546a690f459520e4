//! `cargo bench --bench scale`: the 10^6-channel job to FINISHED, in a child process.

mod suite;

#[global_allocator]
static ALLOCATOR: suite::alloc::Counting = suite::alloc::Counting;

fn main() {
    if suite::scale::is_child() {
        return suite::scale::child();
    }
    let mut table = suite::Table::default();
    suite::scale::rows(&mut table);
    table.print();
}
