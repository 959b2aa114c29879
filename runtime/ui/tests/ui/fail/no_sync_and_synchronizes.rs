use nosync::{no_sync, synchronizes};

#[no_sync]
#[synchronizes]
fn step() {}

fn main() {
    step();
}
