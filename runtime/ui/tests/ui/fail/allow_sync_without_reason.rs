use nosync::allow_sync;

#[allow_sync]
fn warm_up() {}

fn main() {
    warm_up();
}
