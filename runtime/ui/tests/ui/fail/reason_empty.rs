use nosync::synchronizes;

#[synchronizes(maybe, reason = "")]
fn wait() {}

fn main() {
    wait();
}
