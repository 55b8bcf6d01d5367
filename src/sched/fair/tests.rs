//! Unit tests of the fair runqueue (see `tests_*` below for the kernel facts).
use super::*;
