use nosync::synchronizes;

#[synchronizes(reason = "waits")]
const fn wait() -> u8 {
    1
}

const STILL_DEFINED: u8 = wait();

fn main() {
    let _ = STILL_DEFINED;
}
