//! Prints the export schema as Markdown (the README's): `cargo run -p rostrace-export --example schema`.
fn main() {
    print!("{}", rostrace_export::schema::markdown());
}
