//! `verify.render.show` for the values the native reader produces, text for text.
//!
//! `None` where the text would need Python's Unicode tables (a non-ASCII or non-printable
//! character in a string): the record then goes to the Python rules.

use super::json::Val;

pub const SHOW_LIMIT: usize = 60;

/// `_cap`: at most SHOW_LIMIT characters, a longer text cut to 57 and "...".
fn cap(text: String) -> String {
    if text.len() <= SHOW_LIMIT {
        text
    } else {
        let mut out = text[..SHOW_LIMIT - 3].to_string();
        out.push_str("...");
        out
    }
}

/// `repr(text)` of printable ASCII text (Python's quote choice and escapes).
pub fn repr_str(text: &[u8]) -> Option<String> {
    if text.iter().any(|&c| !(0x20..0x7f).contains(&c)) {
        return None;
    }
    let quote = if text.contains(&b'\'') && !text.contains(&b'"') { '"' } else { '\'' };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for &c in text {
        let c = c as char;
        if c == quote || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push(quote);
    Some(out)
}

/// `repr(value)` of a finite float.
pub fn repr_float(value: f64) -> String {
    // Python's repr: the fewest digits that read back to the value, those digits the exact
    // value correctly rounded, a tie to even. Rust's `{:e}` gives the fewest digits, but of
    // two as near (-8796093022208.0625: ...062 and ...063) it may take the odd one; its
    // `{:.Ne}` rounds the exact value to N + 1 digits, a tie to even.
    let shortest = format!("{value:e}");
    let (mantissa, _) = shortest.split_once('e').expect("LowerExp always has an exponent");
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count();
    let sci = format!("{value:.prec$e}", prec = digits.saturating_sub(1));
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp always has an exponent");
    let exp: i32 = exp.parse().expect("LowerExp exponent is an int");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat('0').take((-exp - 1) as usize));
            out.push_str(&digits);
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(&digits);
                out.extend(std::iter::repeat('0').take(point - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    }
    out
}

/// `type_label(value)`.
pub fn type_label(value: &Val<'_>) -> &'static str {
    match value {
        Val::Null => "NoneType",
        Val::Bool(_) => "bool",
        Val::Int(_) => "int",
        Val::Float(_) => "float",
        Val::Str(_) => "str",
        Val::Arr(_) => "list",
        Val::Obj => "dict",
    }
}

/// `show(value)`; None for a text only Python renders (or a dict, whose size is not read).
pub fn show(value: &Val<'_>) -> Option<String> {
    Some(match *value {
        Val::Null => "None".to_string(),
        Val::Bool(true) => "True".to_string(),
        Val::Bool(false) => "False".to_string(),
        Val::Int(i) => i.to_string(),
        Val::Float(f) => repr_float(f),
        Val::Str(s) => {
            // repr(value[:60]) counts characters; the text is ASCII here.
            cap(repr_str(&s[..s.len().min(SHOW_LIMIT)])?)
        }
        Val::Arr(n) => format!("<list of {n} items>"),
        Val::Obj => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_python_shows_them() {
        for (value, text) in [
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e12, "1000000000000.0"),
            (0.0001, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (-0.0, "-0.0"),
            (123.456, "123.456"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-1.0, "-1.0"),
            // Two shortest forms as near (a tie): Python takes the even digit.
            (-8796093022208.0625, "-8796093022208.062"),
            (8796093022208.1875, "8796093022208.188"),
        ] {
            assert_eq!(repr_float(value), text);
        }
    }

    #[test]
    fn strings_as_python_shows_them() {
        assert_eq!(repr_str(b"it's").as_deref(), Some("\"it's\""));
        assert_eq!(repr_str(b"a'\"b").as_deref(), Some("'a\\'\"b'"));
        assert_eq!(repr_str("é".as_bytes()), None);
        let long = "x".repeat(70);
        assert_eq!(show(&Val::Str(long.as_bytes())).unwrap().len(), SHOW_LIMIT);
    }
}
