//! One escape per output medium for text that came from the machine (file contents, directory
//! names, process names, marketing names), applied where a renderer writes it.
//!
//! A file's contents are hostile input: an ESC sequence in `amdgpu.ids` would recolour or retitle
//! the reader's terminal, a newline in a directory name would forge a line of the report, and a
//! right-to-left override would make a path read backwards. Every medium therefore shows such
//! characters as visible escapes (`\n`, `\x1b`, `\u{202e}`) instead of passing them through.
//! The probe's own sentences hold none of them, so escaping a whole summary (catalogue text with
//! machine values interpolated) changes only the values.

use std::fmt::Write as _;

/// Whether `c` must not reach an output as itself: C0 and C1 controls, DEL, and the Unicode
/// format characters that reorder or hide text (bidi embeddings, overrides and isolates,
/// zero-width characters, the byte-order mark).
pub fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00ad}'
            | '\u{061c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}')
}

/// `c` as a visible escape: `\n`, `\t`, `\r`, `\x1b` for the other controls below U+0100,
/// `\u{202e}` above.
fn visible(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if u32::from(c) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

/// `s` with each character `special` claims replaced by its output, every other hostile
/// character made visible, and the rest as is.
fn map(s: &str, special: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if let Some(rep) = special(c) {
            out.push_str(rep);
        } else if is_hostile(c) {
            visible(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// For a terminal or a plain-text file (the text report, `ps`, `agents`, warnings on stderr):
/// hostile characters made visible, nothing else changed.
pub fn text(s: &str) -> String {
    map(s, |_| None)
}

/// For HTML element content and quoted attribute values: the five markup characters as
/// entities, hostile characters made visible (a browser would render most of them invisibly).
pub fn html(s: &str) -> String {
    map(s, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    })
}

/// For XML 1.0 text and attribute values (JUnit): the markup characters as entities, and
/// hostile characters as visible text, since XML 1.0 forbids most C0 controls even as
/// character references.
pub fn xml(s: &str) -> String {
    map(s, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&apos;"),
        _ => None,
    })
}

/// For a markdown table cell or list item: pipes escaped, `<` outside code spans as `&lt;` (a
/// tag such as `</details>` would end the block it is in), line breaks and other hostile
/// characters visible, and backticks escaped when they do not pair up (a stray one would open a
/// code span across the rest of the block; paired ones are the catalogue's `commands`).
pub fn markdown(s: &str) -> String {
    let paired = s.matches('`').count() % 2 == 0;
    let mut in_code = false;
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '`' if paired => {
                in_code = !in_code;
                out.push('`');
            }
            '`' => out.push_str("\\`"),
            '|' => out.push_str("\\|"),
            '<' if !in_code => out.push_str("&lt;"),
            c if is_hostile(c) => visible(c, &mut out),
            c => out.push(c),
        }
    }
    out
}

/// For a Graphviz DOT quoted string: backslash and double quote escaped (a backslash would
/// otherwise start one of DOT's own escapes such as `\n`), hostile characters visible, their
/// backslash escaped in turn.
pub fn dot(s: &str) -> String {
    quoted(s, |_| None)
}

/// For a Prometheus label value inside double quotes: the text format's three escapes (`\\`,
/// `\"`, `\n`); other hostile characters as visible text, their backslash escaped in turn so
/// the value still parses.
pub fn prometheus_label(s: &str) -> String {
    quoted(s, |c| (c == '\n').then_some("\\n"))
}

/// A double-quoted string of a format whose own escapes start with a backslash: `\` and `"`
/// escaped, `own` claims the characters the format escapes itself, every other hostile
/// character made visible with its backslash doubled.
fn quoted(s: &str, own: impl Fn(char) -> Option<&'static str>) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => match own(c) {
                Some(rep) => out.push_str(rep),
                None if is_hostile(c) => {
                    let mut v = String::new();
                    visible(c, &mut v);
                    out.push_str(&v.replace('\\', "\\\\"));
                }
                None => out.push(c),
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\x1b[31mb\nc\td\r\x7f\u{85}e\u{202e}f\u{200b}";

    fn clean(s: &str) -> bool {
        !s.chars().any(is_hostile)
    }

    #[test]
    fn text_makes_controls_and_bidi_visible() {
        assert_eq!(
            text(HOSTILE),
            "a\\x1b[31mb\\nc\\td\\r\\x7f\\x85e\\u{202e}f\\u{200b}"
        );
        assert_eq!(text("AMD Radeon™ 780M 图形"), "AMD Radeon™ 780M 图形");
    }

    #[test]
    fn every_medium_leaves_no_hostile_character() {
        for f in [text, html, xml, markdown, prometheus_label, dot] {
            assert!(clean(&f(HOSTILE)), "{:?}", f(HOSTILE));
        }
    }

    #[test]
    fn markup_characters_per_medium() {
        assert_eq!(
            html("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(xml("<'&\">"), "&lt;&apos;&amp;&quot;&gt;");
        assert_eq!(markdown("a|b`c`"), "a\\|b`c`");
        assert_eq!(markdown("a`b`c`\n"), "a\\`b\\`c\\`\\n");
        assert_eq!(
            markdown("</details> `a <b>` <gfx>"),
            "&lt;/details> `a <b>` &lt;gfx>"
        );
        assert_eq!(
            prometheus_label("a\"b\\c\nd\x1be"),
            "a\\\"b\\\\c\\nd\\\\x1be"
        );
        assert_eq!(dot("a\"b\\c\nd"), "a\\\"b\\\\c\\\\nd");
    }
}
