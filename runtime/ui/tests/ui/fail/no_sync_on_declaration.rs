use nosync::no_sync;

trait Model {
    #[no_sync]
    fn forward(&self);
}

impl Model for () {
    fn forward(&self) {}
}

fn main() {
    ().forward();
}
