use favur_context::{fuzzy, strict};

fn main() {
    let path = "src/lib.rs";
    let _ = strict!(user: "fix {} and {}", path);
    let _ = fuzzy!(assistant: "viewed", path);
    let _ = fuzzy!(user: "{missing}");
}
