use nosync::synchronizes;

#[synchronizes(reason)]
fn wait() {}

fn main() {
    wait();
}
