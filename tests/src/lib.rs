//! End-to-end tests of nosync live in `tests/tests/`; this library is empty.
