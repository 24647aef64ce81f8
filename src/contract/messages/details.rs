//! The details of the catalogue: what exactly was wrong, said in Thai and English with the same named arguments.
//! A [`Message`](super::Message) frames an answer by its code ("The data is not valid: {detail}"); the detail fills
//! it in. Each feature keeps its details in one enum declared with [`details!`], one variant per sentence, its
//! fields the sentence's arguments; an argument is any `Display` value or another catalogued word ([`Arg`]).

use std::fmt::Display;

use super::Lang;

/// A value that fills a `{name}` of a detail: the same text in both languages (a number, a code, a caller's text),
/// or a catalogued word or detail that has its own text in each.
pub trait Arg {
    fn text(&self, lang: Lang) -> String;
}

impl<T: Display + ?Sized> Arg for T {
    fn text(&self, lang: Lang) -> String {
        let _ = lang;
        self.to_string()
    }
}

/// A catalogued sentence, said in either language.
pub trait Detail {
    /// The sentence in `lang`, its arguments filled in.
    fn render(&self, lang: Lang) -> String;

    /// Both languages at once: (Thai, English).
    fn both(&self) -> (String, String) {
        (self.render(Lang::Th), self.render(Lang::En))
    }
}

impl<T: Detail + ?Sized> Detail for &T {
    fn render(&self, lang: Lang) -> String {
        (**self).render(lang)
    }
}

/// The rules' own refusals (`crate::numbering`): typed, with their arguments, and said in both languages by the pure
/// module itself, since the live preview in the browser shows them without the server.
impl Detail for crate::numbering::TemplateError {
    fn render(&self, lang: Lang) -> String {
        match lang {
            Lang::Th => self.message_th(),
            Lang::En => self.to_string(),
        }
    }
}

impl Detail for crate::numbering::CodeError {
    fn render(&self, lang: Lang) -> String {
        match lang {
            Lang::Th => self.message_th(),
            Lang::En => self.to_string(),
        }
    }
}

/// Several details said as one, `; `-separated (all the refusals of one template): a detail, and an argument.
pub struct AllOf<'a, D>(pub &'a [D]);

impl<D: Detail> Detail for AllOf<'_, D> {
    fn render(&self, lang: Lang) -> String {
        self.0.iter().map(|d| d.render(lang)).collect::<Vec<_>>().join("; ")
    }
}

impl<D: Detail> Arg for AllOf<'_, D> {
    fn text(&self, lang: Lang) -> String {
        self.render(lang)
    }
}

/// One entry of a catalogue, as its test reads it.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub name: &'static str,
    pub arguments: &'static [&'static str],
    pub th: &'static str,
    pub en: &'static str,
}

/// `template` with each `{name}` replaced by its value; a `{` that starts no known name stays as it is (templates
/// quote `{SEQ:4}` and JSON).
pub fn fill(template: &str, args: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}').and_then(|close| args.iter().find(|(k, _)| *k == &after[..close]).map(|(_, v)| (close, v))) {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `{name}`s of a template that are plain lower-case names (arguments), in order of first use.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        let name = &after[..close];
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !names.contains(&name) {
            names.push(name);
        }
        rest = &after[close + 1..];
    }
    names
}

/// Declares a catalogue of details: an enum whose variants are sentences and whose fields are their arguments,
/// with its [`Detail`] and [`Arg`] impls and its [`Entry`] table (`ENTRIES`).
///
/// ```ignore
/// details! {
///     /// The details of an import.
///     pub enum ImportDetail {
///         TooManyRows { max } => "นำเข้าได้ครั้งละไม่เกิน {max} แถว", "at most {max} rows per import";
///     }
/// }
/// ```
#[macro_export]
macro_rules! details {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident $({ $($arg:ident),* $(,)? })? => $th:literal, $en:literal; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        pub enum $name<'a> {
            $( $(#[$vmeta])* $variant $({ $($arg: &'a dyn $crate::contract::messages::Arg),* })?, )*
            #[doc(hidden)]
            _Unused(::core::marker::PhantomData<&'a ()>),
        }

        impl $name<'_> {
            /// Every sentence, for the catalogue's test.
            pub const ENTRIES: &'static [$crate::contract::messages::Entry] = &[
                $( $crate::contract::messages::Entry {
                    name: stringify!($variant),
                    arguments: &[$($(stringify!($arg)),*)?],
                    th: $th,
                    en: $en,
                }, )*
            ];
        }

        impl $name<'_> {
            fn template(&self, lang: $crate::contract::Lang) -> &'static str {
                match (self, lang) {
                    $( ($name::$variant { .. }, $crate::contract::Lang::Th) => $th,
                       ($name::$variant { .. }, $crate::contract::Lang::En) => $en, )*
                    ($name::_Unused(_), _) => "",
                }
            }

            #[allow(unused_variables)]
            fn arguments(&self, lang: $crate::contract::Lang) -> Vec<(&'static str, String)> {
                match self {
                    $( $name::$variant $({ $($arg),* })? => vec![$($( (stringify!($arg), $arg.text(lang)) ),*)?], )*
                    $name::_Unused(_) => Vec::new(),
                }
            }
        }

        impl $crate::contract::messages::Detail for $name<'_> {
            fn render(&self, lang: $crate::contract::Lang) -> String {
                let args = self.arguments(lang);
                let pairs: Vec<(&str, &str)> = args.iter().map(|(k, v)| (*k, v.as_str())).collect();
                $crate::contract::messages::fill(self.template(lang), &pairs)
            }
        }

        impl $crate::contract::messages::Arg for $name<'_> {
            fn text(&self, lang: $crate::contract::Lang) -> String {
                $crate::contract::messages::Detail::render(self, lang)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::details! {
        /// A catalogue for this test.
        pub enum Sample {
            Plain => "ไม่มีแถว", "no rows";
            TooMany { max } => "ไม่เกิน {max} แถว", "at most {max} rows";
            Nested { what, row } => "แถวที่ {row}: {what}", "row {row}: {what}";
        }
    }

    #[test]
    fn sentences_fill_their_arguments_in_each_language() {
        assert_eq!(Sample::Plain.both(), ("ไม่มีแถว".to_string(), "no rows".to_string()));
        assert_eq!(Sample::TooMany { max: &10 }.render(Lang::En), "at most 10 rows");
        let inner = Sample::TooMany { max: &5 };
        let outer = Sample::Nested { what: &inner, row: &"3" };
        assert_eq!(outer.both(), ("แถวที่ 3: ไม่เกิน 5 แถว".to_string(), "row 3: at most 5 rows".to_string()));
        assert_eq!(Sample::ENTRIES.len(), 3);
        assert_eq!(Sample::ENTRIES[2].arguments, &["what", "row"]);
    }

    #[test]
    fn braces_that_name_no_argument_stay() {
        assert_eq!(fill("{SEQ:4} and {x} and {", &[("x", "1")]), "{SEQ:4} and 1 and {");
        assert_eq!(fill("{\"rows\": [...]}", &[]), "{\"rows\": [...]}");
        assert_eq!(placeholders("{SEQ:4} {max} {\"rows\"} {max} {row_no}"), vec!["max", "row_no"]);
    }
}
