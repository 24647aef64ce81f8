// `sqlx::migrate!` copies migrations/ into the binary at compile time; without this line a new migration file
// alone leaves an incremental build's binary without it (no Rust source changed).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
