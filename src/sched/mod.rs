//! The Linux fair class model (`kernel/sched/fair.c`), split by mechanism.

pub mod wakeup;
