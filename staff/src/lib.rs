//! The staff script: what makes the reserve page (`/`) live. The page is the server's HTML, whole, with plain forms
//! that work without any script (docs/adr/0005); this small module of its own (not the Leptos bundle, which the page
//! never loads) asks the server for the page again when a choice changes or a live event concerns it, posts the forms
//! in the background and shows their answer in place, counts the reservation down and copies the number. It knows no
//! rule and no word: everything it shows comes from the server's HTML. The markers it reads are in `markers.rs`,
//! the main crate's `contract::staff_page`: one file, compiled into both.

#[cfg(target_arch = "wasm32")]
mod page;

#[path = "../../src/contract/staff_page.rs"]
#[allow(dead_code)] // the server's half of the markers
mod markers;

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    page::start();
}
