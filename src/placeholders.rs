//! The `{name}` placeholder syntax shared by recipes (`run`, `env`, matrix values) and
//! inventories (host-side switch and notification commands). A leaf: it knows nothing of what
//! the names mean.

/// Expands `{name}` placeholders.
///
/// The syntax leaves shell text alone: `{{` and `}}` are literal braces, `${name}` is shell
/// parameter expansion and stays as written, and braces around anything that is not an
/// identifier (`{print $1}`, `{a,b}`) stay literal. Only `{identifier}` is a placeholder; an
/// identifier `lookup` does not know is returned as the error.
pub fn render_template(
    template: &str,
    lookup: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let bytes = template.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'{' && bytes.get(i + 1) == Some(&b'{') {
            out.push('{');
            i += 2;
            continue;
        }
        if c == b'}' && bytes.get(i + 1) == Some(&b'}') {
            out.push('}');
            i += 2;
            continue;
        }
        if c == b'{'
            && (i == 0 || bytes[i - 1] != b'$')
            && let Some(len) = template[i + 1..].find('}')
        {
            let inner = &template[i + 1..i + 1 + len];
            let is_ident = inner
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && inner
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if is_ident {
                match lookup(inner) {
                    Some(value) => out.push_str(&value),
                    None => return Err(inner.to_owned()),
                }
                i += len + 2;
                continue;
            }
        }
        let ch = template[i..]
            .chars()
            .next()
            .expect("invariant: i is a char boundary");
        out.push(ch);
        i += ch.len_utf8();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::render_template;

    fn render(t: &str) -> Result<String, String> {
        render_template(t, &mut |k| (k == "level").then(|| "2".to_owned()))
    }

    #[test]
    fn placeholders_expand_and_shell_text_stays() {
        assert_eq!(render("run {level}").as_deref(), Ok("run 2"));
        assert_eq!(
            render("echo ${HOME} {level}").as_deref(),
            Ok("echo ${HOME} 2")
        );
        assert_eq!(
            render("awk '{print $1}'").as_deref(),
            Ok("awk '{print $1}'")
        );
        assert_eq!(render("echo {a,b}").as_deref(), Ok("echo {a,b}"));
        assert_eq!(render("echo {{level}}").as_deref(), Ok("echo {level}"));
        assert_eq!(render("echo {levle}"), Err("levle".to_owned()));
    }
}
