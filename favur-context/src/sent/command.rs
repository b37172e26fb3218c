//! The commands of a plain-chat assistant turn: its fenced ```` ```bash ```` blocks, as
//! mini-swe-agent finds and runs them (what [`Form::Command`](super::Form::Command) keeps).

/// The fenced bash blocks of an assistant text, as mini-swe-agent finds them
/// (```` ```bash\s*\n(.*?)\n``` ````), trimmed.
pub(crate) fn bash_blocks(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(p) = memchr::memmem::find(rest.as_bytes(), b"```bash") {
        let after = &rest[p + "```bash".len()..];
        let ws = after.len() - after.trim_start().len();
        let Some(nl) = after[..ws].rfind('\n') else {
            rest = after;
            continue;
        };
        let body = &after[nl + 1..];
        // The lazy `(.*?)\n```` may match an empty body right at the start.
        let (cmd, next) = if let Some(stripped) = body.strip_prefix("```") {
            ("", stripped)
        } else if let Some(end) = memchr::memmem::find(body.as_bytes(), b"\n```") {
            (&body[..end], &body[end + 4..])
        } else {
            break;
        };
        found.push(cmd.trim());
        rest = next;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::bash_blocks;

    #[test]
    fn finds_blocks_like_the_agent() {
        assert_eq!(
            bash_blocks("THOUGHT: x\n\n```bash\nls -la\n```"),
            vec!["ls -la"]
        );
        assert_eq!(
            bash_blocks("```bash\na\n```\n```bash\nb\n```"),
            vec!["a", "b"]
        );
        assert_eq!(bash_blocks("```bash ls```"), Vec::<&str>::new());
        assert_eq!(bash_blocks("```bash\nunterminated"), Vec::<&str>::new());
        assert_eq!(
            bash_blocks("```bash\ncat <<'EOF' > a\nx\nEOF\n```"),
            vec!["cat <<'EOF' > a\nx\nEOF"]
        );
    }
}
