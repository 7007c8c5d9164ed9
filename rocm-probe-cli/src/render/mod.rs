//! Output formats; one module per command's text rendering (JSON is serde's).

pub mod agents;
pub mod html;
pub mod inspect;
pub mod junit;
pub mod markdown;
pub mod ps;
pub mod report;

use std::io::IsTerminal;

use crate::args::ColorChoice;

/// Resolves `--color` once: `auto` colours only a terminal, and never when NO_COLOR is set.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

/// The width to wrap prose at: `COLUMNS` when set (what shells export and what tests pin),
/// else the terminal's width when standard output is one, else 100; never below 40.
pub fn width() -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok());
    let from_tty = || {
        terminal_size::terminal_size_of(std::io::stdout())
            .map(|(terminal_size::Width(w), _)| usize::from(w))
    };
    from_env.or_else(from_tty).unwrap_or(100).max(40)
}

/// Wraps prose at word boundaries.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split_whitespace() {
        if line > 0 && line + 1 + word.len() > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    out
}
