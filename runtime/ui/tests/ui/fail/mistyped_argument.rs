use nosync::synchronizes;

#[synchronizes(reson = "waits")]
fn wait() {}

fn main() {
    wait();
}
