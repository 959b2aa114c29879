use nosync::synchronizes;

#[synchronizes(maybe = true)]
fn wait() {}

fn main() {
    wait();
}
