//! The differential properties, one module per kernel file.

mod eevdf;
mod inject;
mod menu;
mod pelt;
mod weights;
