//! Output formats; one module per command's text rendering (JSON is serde's).

pub mod agents;
pub mod html;
pub mod inspect;
pub mod junit;
pub mod markdown;
pub mod ps;
pub mod report;

use std::io::IsTerminal;

use rocm_probe::facts::os_release::Distro;
use rocm_probe::finding::RemedyStep;
use rocm_probe::msg;

use crate::args::ColorChoice;

/// One line of a remedy's command block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine<'a> {
    /// The commands that follow are for this family (`None`: for every distribution, after
    /// some that were not).
    Label(Option<Distro>),
    /// A command, copyable as it is; `variant` when it is one family's.
    Command {
        /// The command.
        command: &'a str,
        /// Whether it follows a label (is indented under it in text).
        variant: bool,
    },
}

/// The commands of `steps` in order, each group of one family's variants headed by a label,
/// and the commands for every distribution that follow such a group headed too.
pub fn command_lines(steps: &[RemedyStep]) -> Vec<CommandLine<'_>> {
    let mut out = Vec::new();
    let mut current: Option<Distro> = None;
    let mut labelled = false;
    for s in steps {
        let Some(command) = s.command.as_deref() else {
            continue;
        };
        if s.distro != current {
            out.push(CommandLine::Label(s.distro));
            current = s.distro;
            labelled = true;
        }
        out.push(CommandLine::Command {
            command,
            variant: labelled,
        });
    }
    out
}

/// A family's name as a label says it (`Debian/Ubuntu`); `None`: every distribution.
pub fn distro_name(distro: Option<Distro>) -> String {
    match distro {
        Some(Distro::Debian) => msg!("cli.distro-debian"),
        Some(Distro::Fedora) => msg!("cli.distro-fedora"),
        Some(Distro::Suse) => msg!("cli.distro-suse"),
        Some(Distro::Arch) => msg!("cli.distro-arch"),
        None => msg!("cli.distro-all"),
    }
}

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

/// Columns a character takes on a terminal: two for CJK ideographs and full-width forms.
fn char_columns(c: char) -> usize {
    let wide = ('\u{1100}'..='\u{115f}').contains(&c)
        || ('\u{2e80}'..='\u{a4cf}').contains(&c)
        || ('\u{ac00}'..='\u{d7a3}').contains(&c)
        || ('\u{f900}'..='\u{faff}').contains(&c)
        || ('\u{fe30}'..='\u{fe4f}').contains(&c)
        || ('\u{ff00}'..='\u{ff60}').contains(&c)
        || ('\u{ffe0}'..='\u{ffe6}').contains(&c);
    if wide { 2 } else { 1 }
}

/// Columns `s` takes on a terminal.
pub fn columns(s: &str) -> usize {
    s.chars().map(char_columns).sum()
}

/// `s` padded with spaces to `width` columns (CJK counted as two).
pub fn pad(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(columns(s))))
}

/// Wraps prose at `width` columns: at spaces, and between CJK characters (which have none),
/// never before closing punctuation and never inside a `command` in backticks (it is copied
/// and pasted whole).
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in unbroken_words(text) {
        let pieces = if word.contains(' ') {
            vec![word.as_str()]
        } else {
            pieces(&word)
        };
        for (i, piece) in pieces.into_iter().enumerate() {
            let gap = usize::from(i == 0 && line > 0);
            let w = columns(piece);
            if line > 0 && line + gap + w > width {
                out.push('\n');
                line = 0;
            } else if gap == 1 {
                out.push(' ');
                line += 1;
            }
            out.push_str(piece);
            line += w;
        }
    }
    out
}

/// The words of `text`, a backtick span with its spaces counting as one word.
fn unbroken_words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for word in text.split_whitespace() {
        match out.last_mut() {
            Some(last) if open => {
                last.push(' ');
                last.push_str(word);
            }
            _ => out.push(word.to_owned()),
        }
        if word.matches('`').count() % 2 == 1 {
            open = !open;
        }
    }
    out
}

/// A word split where a line may break inside it: after each wide character, unless the next
/// is punctuation that must not start a line.
fn pieces(word: &str) -> Vec<&str> {
    const NO_START: &str = "，。、：；！？）」』】〉》”’,.:;!?)]}";
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = word.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().copied();
        let after = i + c.len_utf8();
        let breakable = match next {
            None => false,
            Some((_, n)) => (char_columns(c) == 2 || char_columns(n) == 2) && !NO_START.contains(n),
        };
        if breakable {
            out.push(&word[start..after]);
            start = after;
        }
    }
    if start < word.len() {
        out.push(&word[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_english_at_spaces_and_chinese_between_characters() {
        assert_eq!(wrap("one two three", 7), "one two\nthree");
        let zh = wrap("安装同一版本的软件包，然后运行 `sudo ldconfig`。", 20);
        for line in zh.lines() {
            assert!(columns(line) <= 20, "{line:?}");
            assert!(!line.starts_with(['，', '。']), "{line:?}");
        }
        let squeeze = |s: &str| s.replace(['\n', ' '], "");
        assert_eq!(
            squeeze(&zh),
            squeeze("安装同一版本的软件包，然后运行 `sudo ldconfig`。")
        );
        let cmd = wrap("然后运行 `sudo apt install rocblas` 并重新登录", 12);
        assert!(
            cmd.lines()
                .any(|l| l.contains("`sudo apt install rocblas`")),
            "{cmd}"
        );
        assert_eq!(wrap("run `a b` now", 5), "run\n`a b`\nnow");
        assert_eq!(pad("通过", 4), "通过");
        assert_eq!(pad("PASS", 6), "PASS  ");
    }
}
