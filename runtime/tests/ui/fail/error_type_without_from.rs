use nosync::synchronizes;

#[synchronizes(reason = "copies to the host")]
fn download() -> Result<Vec<u8>, String> {
    Ok(Vec::new())
}

fn main() {
    let _ = download();
}
