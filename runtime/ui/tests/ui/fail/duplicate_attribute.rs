use nosync::no_sync;

#[no_sync]
#[::nosync::no_sync]
fn step() {}

fn main() {
    step();
}
