use nosync::synchronizes;

#[derive(Debug)]
pub struct CopyError;

#[synchronizes(reason = "copies to the host")]
fn download() -> Result<Vec<u8>, CopyError> {
    Ok(Vec::new())
}

fn main() {
    let _ = download();
}
