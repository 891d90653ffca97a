//! The batch mode on the Message Batches API (half price): batch-mode jobs accumulate in D1,
//! [`flush`] sends them as Message Batches (claiming them first, so nothing is paid twice), and
//! [`poll`] settles their results once a batch has ended.

pub mod flush;
pub mod poll;
