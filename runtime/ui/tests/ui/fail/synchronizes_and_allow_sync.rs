use nosync::{allow_sync, synchronizes};

#[synchronizes]
#[allow_sync(reason = "reads back once")]
fn read() {}

fn main() {
    read();
}
