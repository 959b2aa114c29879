use nosync::synchronizes;

#[synchronizes(reason = "waits", reason = "copies")]
fn wait() {}

fn main() {
    wait();
}
