//! Files the tests write themselves (shared with the library's tests), the
//! servers the store tests run against and the scan helpers they share.

#![allow(dead_code)]

pub mod moto;
pub mod range_server;
pub mod scan;

#[path = "../../../tests/common/mod.rs"]
mod files;

pub use files::*;
