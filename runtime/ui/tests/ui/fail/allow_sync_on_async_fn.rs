use nosync::allow_sync;

#[allow_sync(reason = "reads back once")]
async fn read() {}

fn main() {
    drop(read());
}
