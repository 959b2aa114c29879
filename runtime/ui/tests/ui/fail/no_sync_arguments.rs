use nosync::no_sync;

#[no_sync(reason = "hot")]
fn step() {}

fn main() {
    step();
}
