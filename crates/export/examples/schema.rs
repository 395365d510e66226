//! Prints the export schema as Markdown (the README's): `cargo run -p rostrace-export --example schema`.
fn main() {
    print!("{}", export::schema::markdown());
}
