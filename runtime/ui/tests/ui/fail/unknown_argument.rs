use nosync::synchronizes;

#[synchronizes(blocking, reason = "waits")]
fn wait() {}

fn main() {
    wait();
}
