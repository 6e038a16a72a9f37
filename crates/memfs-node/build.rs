//! Links the addon as napi-rs needs (no libnode at link time: Node resolves N-API's symbols).

fn main() {
    napi_build::setup();
}
