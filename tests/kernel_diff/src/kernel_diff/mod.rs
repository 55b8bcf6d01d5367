//! The differential properties, one module per kernel file.

mod inject;
mod menu;
mod pelt;
mod weights;
