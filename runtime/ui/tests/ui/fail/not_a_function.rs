use nosync::no_sync;

#[no_sync]
struct Stream;

fn main() {
    let _still_defined = Stream;
}
