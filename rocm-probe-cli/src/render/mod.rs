//! Output formats; one module per command's text rendering (JSON is serde's).

pub mod agents;
pub mod fleet;
pub mod html;
pub mod inspect;
pub mod junit;
pub mod markdown;
pub mod ps;
pub mod report;
pub mod topo;

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

/// Resolves `--color` once for standard output: `auto` asks anstream, which colours only a
/// terminal, never with NO_COLOR set or TERM=dumb, and always with CLICOLOR_FORCE. Output to a
/// file (`-o`) is coloured only when asked (`always`, or CLICOLOR_FORCE).
pub fn use_color(choice: ColorChoice, to_stdout: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if to_stdout => !matches!(
            anstream::AutoStream::choice(&std::io::stdout()),
            anstream::ColorChoice::Never
        ),
        ColorChoice::Auto => {
            std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0")
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// The width to wrap text at: `COLUMNS` when set (what shells export and what tests pin), else
/// the terminal's width when standard output is one, else 80 (a pipe, a file, an issue being
/// pasted into); never below 40.
pub fn width() -> usize {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok());
    let from_tty = || {
        terminal_size::terminal_size_of(std::io::stdout())
            .map(|(terminal_size::Width(w), _)| usize::from(w))
    };
    from_env.or_else(from_tty).unwrap_or(80).max(40)
}

/// Columns `s` takes on a terminal (East Asian wide characters count two).
pub fn columns(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` padded with spaces to `width` columns (CJK counted as two).
pub fn pad(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(columns(s))))
}

/// A no-break space: what joins the words of a `command` in backticks while it is wrapped.
const GLUE: char = '\u{a0}';

/// Wraps prose at `width` columns: at spaces, and between CJK characters (which have none; never
/// before closing punctuation), never inside a word, a path or a URL, and never inside a
/// `command` in backticks that fits on a line (it is copied and pasted whole).
pub fn wrap(text: &str, width: usize) -> String {
    hang(text, width, "", "")
}

/// Wraps `text` at `width` columns, the first line starting with `first`, the others with
/// `rest` (a hanging indent). A word longer than a line stays whole, on a line of its own.
pub fn hang(text: &str, width: usize, first: &str, rest: &str) -> String {
    // A span longer than a line is broken like prose: it could not be kept whole anyway.
    let glued = glue_commands(text, width.saturating_sub(columns(rest)));
    let options = textwrap::Options::new(width.max(1))
        .initial_indent(first)
        .subsequent_indent(rest)
        .word_separator(textwrap::WordSeparator::Custom(break_points))
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .break_words(false);
    textwrap::wrap(&glued, options)
        .iter()
        .map(|l| l.replace(GLUE, " "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where a line may break: after spaces, and between two characters of which one is wide (CJK,
/// which has no spaces) unless the second must not start a line or the first must not end one.
/// Never inside a run of narrow characters: a path or a URL is broken nowhere.
fn break_points(line: &str) -> Box<dyn Iterator<Item = textwrap::core::Word<'_>> + '_> {
    const NO_START: &str = "，。、：；！？）」』】〉》”’,.:;!?)]}%";
    const NO_END: &str = "（「『【〈《“‘([{";
    let wide = |c: char| unicode_width::UnicodeWidthChar::width(c) == Some(2);
    let mut words = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        let Some(&(at, n)) = chars.peek() else { break };
        let space = c == ' ' && n != ' ';
        let cjk = c != ' '
            && n != ' '
            && (wide(c) || wide(n))
            && !NO_START.contains(n)
            && !NO_END.contains(c);
        if space || cjk {
            words.push(textwrap::core::Word::from(&line[start..at]));
            start = at;
        }
    }
    if start < line.len() {
        words.push(textwrap::core::Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
}

/// The spaces inside backtick spans of at most `max` columns replaced by [`GLUE`]; newlines
/// become spaces, all other whitespace stays (padding in columns).
fn glue_commands(text: &str, max: usize) -> String {
    let text: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('`') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('`') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let span = &rest[open..open + close + 2];
        if columns(span) <= max {
            out.push_str(&span.replace(' ', &GLUE.to_string()));
        } else {
            out.push_str(span);
        }
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    out
}

/// One line of a listing, as it is when it fits in `width`, else wrapped under itself: its
/// indent first, four more columns on the lines that continue it.
pub fn fit(line: &str, width: usize) -> String {
    if columns(line) <= width {
        return line.to_owned();
    }
    let body = line.trim_start();
    let indent = &line[..line.len() - body.len()];
    hang(body, width, indent, &format!("{indent}    "))
}

/// A shell command for copying, at `width` columns after `indent`: as it is when it fits, else
/// broken at spaces outside quotes with ` \` at each line's end (the shell joins the lines
/// again), the continuation lines indented four more columns.
pub fn command(command: &str, indent: &str, width: usize) -> String {
    if columns(indent) + columns(command) <= width {
        return format!("{indent}{command}");
    }
    // The words, split at spaces outside quotes.
    let mut words: Vec<String> = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (quote, c) {
            (None, ' ') => {
                if !words.last().is_some_and(String::is_empty) {
                    words.push(String::new());
                }
                continue;
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        if let Some(w) = words.last_mut() {
            w.push(c);
        }
    }
    let next = format!("{indent}    ");
    let mut lines: Vec<String> = vec![indent.to_owned()];
    for word in words.into_iter().filter(|w| !w.is_empty()) {
        let Some(line) = lines.last_mut() else { break };
        let bare = line.trim_end().is_empty();
        // Room for the word and, should more follow, " \".
        if !bare && columns(line) + 1 + columns(&word) + 2 > width {
            line.push_str(" \\");
            lines.push(format!("{next}{word}"));
        } else {
            if !bare {
                line.push(' ');
            }
            line.push_str(&word);
        }
    }
    lines.join("\n")
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
        // A command that fits on a line stays whole; one longer than a line is broken.
        let cmd = wrap("然后运行 `sudo apt install rocblas` 并重新登录", 30);
        assert!(
            cmd.lines()
                .any(|l| l.contains("`sudo apt install rocblas`")),
            "{cmd}"
        );
        let long = wrap("然后运行 `sudo apt install rocblas` 并重新登录", 12);
        assert!(long.lines().all(|l| columns(l) <= 12), "{long}");
        assert_eq!(wrap("run `a b` now", 5), "run\n`a b`\nnow");
        assert_eq!(
            hang("aaa bbb ccc ddd", 9, "- ", "  "),
            "- aaa bbb\n  ccc ddd"
        );
        let url = "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html";
        assert!(
            wrap(&format!("see {url} now"), 40)
                .lines()
                .any(|l| l == url)
        );
        let cmd = command(
            "sudo apt install rocm-hip-runtime rocblas hipblaslt miopen-hip",
            "  ",
            30,
        );
        for line in cmd.lines() {
            assert!(columns(line) <= 30, "{line:?}");
        }
        assert_eq!(
            cmd.replace(" \\\n", " ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            "sudo apt install rocm-hip-runtime rocblas hipblaslt miopen-hip"
        );
        assert_eq!(
            command("echo 'a b c d e f'", "", 10),
            "echo \\\n    'a b c d e f'"
        );
        assert_eq!(pad("通过", 4), "通过");
        assert_eq!(pad("PASS", 6), "PASS  ");
    }
}
