//! `cargo bench`: every section of the suite, printed as one table (see benches/README.md).

mod suite;

#[global_allocator]
static ALLOCATOR: suite::alloc::Counting = suite::alloc::Counting;

fn main() {
    if suite::scale::is_child() {
        return suite::scale::child();
    }
    let mut table = suite::Table::default();
    suite::kernel::rows(&mut table);
    suite::model::rows(&mut table);
    suite::scale::rows(&mut table);
    suite::fuzz::rows(&mut table);
    table.print();
}
