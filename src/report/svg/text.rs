//! Text inside the SVG: escaped for XML, shortened where a label has a fixed room, and
//! measured roughly (there is no font engine here) to lay out rows that do not overlap.

/// Escapes text for XML content and attribute values.
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0 at all.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
    }
    out
}

/// `text` cut to at most `chars` characters (at least the `…` that marks a cut).
#[must_use]
pub fn shorten(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Average width of a character (digits and lower case of DejaVu Sans and Helvetica) per
/// pixel of font size.
const CHAR_EM: f64 = 6.2 / 11.0;

/// Approximate width in pixels of `text` at 11 px sans-serif.
#[must_use]
pub fn width(text: &str) -> f64 {
    text.chars().count() as f64 * 11.0 * CHAR_EM
}

/// `text` and a font size (11 px down to 8 px) at which it fits `room` pixels; below 8 px it
/// is cut in the middle, so both ends stay (`fastpath-a` and `fastpath-b` stay apart).
#[must_use]
pub fn fit(text: &str, room: f64) -> (String, f64) {
    let n = text.chars().count().max(1) as f64;
    let size = (room / (n * CHAR_EM)).clamp(8.0, 11.0);
    let fits = (room / (size * CHAR_EM)).floor().max(1.0) as usize;
    if text.chars().count() <= fits {
        return (text.to_owned(), size);
    }
    let head = (fits - 1).div_ceil(2);
    let tail = fits - 1 - head;
    let chars: Vec<char> = text.chars().collect();
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    (out, size)
}

/// The ` font-size="…"` attribute for `size`, empty at the figure's 11 px.
#[must_use]
pub fn font_size(size: f64) -> String {
    if size >= 11.0 {
        String::new()
    } else {
        format!(r#" font-size="{size:.1}""#)
    }
}

#[cfg(test)]
mod tests {
    use super::{escape, fit, shorten};

    #[test]
    fn hostile_text_is_escaped_and_bounded() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        assert_eq!(escape("x\u{1}y"), "x\u{fffd}y");
        assert_eq!(shorten("parent", 8), "parent");
        assert_eq!(shorten("a-very-long-kernel", 8), "a-very-…");
        assert_eq!(shorten("abc", 0), "…");
    }

    #[test]
    fn labels_shrink_then_lose_their_middle() {
        assert_eq!(fit("parent-a", 100.0), ("parent-a".to_owned(), 11.0));
        let (text, size) = fit("fastpath-a", 50.0);
        assert_eq!(text, "fastpath-a");
        assert!((8.0..11.0).contains(&size));
        let (text, size) = fit("a-very-long-point-label-b", 50.0);
        assert_eq!(size, 8.0);
        assert_eq!(text, "a-ver…bel-b");
        assert_eq!(fit("", 0.0).0, "");
        assert_eq!(fit("abc", 0.0).0, "…");
    }
}
