//! The one error type of the GPU operations.

use cudarc::driver::DriverError;

use crate::SyncViolation;

/// What a GPU operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operation would block the host inside a forbid scope and the mode is
    /// [`Mode::Error`](crate::Mode::Error).
    #[error(transparent)]
    Sync(#[from] SyncViolation),
    /// The CUDA driver returned an error (possibly from earlier asynchronous work).
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),
    /// NVRTC rejected a module's source; `log` is the compiler's log.
    #[error("NVRTC could not compile module `{name}`: {log}")]
    Compile {
        /// The module's name.
        name: String,
        /// The compiler's message.
        log: String,
    },
    /// The arguments do not fit the operation (lengths, sizes); nothing was enqueued.
    #[error("`{op}`: {message}")]
    Usage {
        /// The operation, e.g. `Kernels::axpy`.
        op: &'static str,
        /// What is wrong with the arguments.
        message: String,
    },
    /// No CUDA driver, device or NVRTC library could be used.
    #[error("CUDA is not available: {0}")]
    Unavailable(String),
}

impl Error {
    pub(crate) fn usage(op: &'static str, message: impl Into<String>) -> Error {
        Error::Usage {
            op,
            message: message.into(),
        }
    }

    /// The violation, when this error is one.
    pub fn as_violation(&self) -> Option<&SyncViolation> {
        match self {
            Error::Sync(v) => Some(v),
            _ => None,
        }
    }
}
