use nosync::allow_sync;

#[allow_sync(reason = WARM_UP)]
fn warm_up() {}

const WARM_UP: &str = "runs once";

fn main() {
    warm_up();
    let _ = WARM_UP;
}
