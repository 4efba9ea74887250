//! What the operating system must guarantee for the dongle: files only
//! their owner can change, a data folder for its user alone, a downstream
//! server's whole process tree ending with it. The decisions are
//! platform-neutral functions over plain data ([`acl`]: a Windows access
//! list in, a verdict out), unit-tested on every platform; the system-call
//! layers ([`unix`] with POSIX calls only, `windows`) read and apply that
//! data and are small enough to read in one sitting.

pub mod acl;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use unix::{
    ProcessTree, create_private_dir, machine_name, process_alive, secret_exposed, trust_problem,
    user_name, writable_by_others,
};
#[cfg(windows)]
pub use windows::{
    ProcessTree, create_private_dir, machine_name, process_alive, secret_exposed, trust_problem,
    user_name, writable_by_others,
};
