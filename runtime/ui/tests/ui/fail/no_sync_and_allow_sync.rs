use nosync::allow_sync;

#[allow_sync(reason = "warm-up")]
#[nosync::no_sync]
fn step() {}

fn main() {
    step();
}
