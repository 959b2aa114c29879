//! GPU operations over cudarc whose blocking calls check the nosync flag.
