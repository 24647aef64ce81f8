//! Types that define the reactive graph itself. These are mostly internal, but can be used to
//! create custom reactive primitives.

mod node;
mod sets;
mod source;
mod subscriber;

pub use node::*;
pub(crate) use sets::*;
pub use source::*;
pub use subscriber::*;
