//! The differential properties, one module per kernel file.

mod balance;
mod cfs;
mod detach;
mod dstgroup;
mod eevdf;
mod idlest;
mod inject;
mod lb;
mod menu;
mod migrate;
mod numa;
mod numa_cmp;
mod pelt;
mod sglb;
mod sibling;
mod sis;
mod teo;
mod wakeup;
mod weights;
