//! The edits `hook_recall` makes to Django 5.2, as Claude Code's `Edit` tool sends them
//! (old_string, new_string), six of each kind, with the top-level names whose mentions are the
//! files the truth (pyright's CLI) checks besides the written one.

/// What kind of edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A function's body changed, its signature and its errors as they were.
    Body,
    /// An error in the written file only.
    Local,
    /// A signature other modules call changed: a parameter added or removed, a return type.
    Signature,
    /// A top-level name other modules import renamed or deleted.
    Rename,
    /// A comment or docstring: nothing to say.
    Comment,
    /// An edit that undoes an error the session's previous edit (`setup`) introduced.
    Fix,
}

pub(crate) const KINDS: [Kind; 6] = [
    Kind::Body,
    Kind::Local,
    Kind::Signature,
    Kind::Rename,
    Kind::Comment,
    Kind::Fix,
];

impl Kind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Body => "body-only",
            Kind::Local => "error, same file",
            Kind::Signature => "signature change",
            Kind::Rename => "rename/delete",
            Kind::Comment => "comment/docstring",
            Kind::Fix => "fix",
        }
    }
}

/// One edit: in `module`, `old` (occurring once) becomes `new`. A fix is made on the file as
/// `setup` left it: the original's `setup` text became `old` first (an edit of its own, with
/// its hooks, in the same session), then the fix makes it `new`.
pub(crate) struct Case {
    pub kind: Kind,
    pub name: &'static str,
    pub module: &'static str,
    pub names: &'static [&'static str],
    pub setup: Option<&'static str>,
    pub old: &'static str,
    pub new: &'static str,
}

const TEXT: &str = "django/utils/text.py";
const HTML: &str = "django/utils/html.py";
const CRYPTO: &str = "django/utils/crypto.py";
const TZ: &str = "django/utils/timezone.py";
const DATEPARSE: &str = "django/utils/dateparse.py";
const ENCODING: &str = "django/utils/encoding.py";
const FUNCTIONAL: &str = "django/utils/functional.py";

const fn case(
    kind: Kind,
    name: &'static str,
    module: &'static str,
    names: &'static [&'static str],
    old: &'static str,
    new: &'static str,
) -> Case {
    Case {
        kind,
        name,
        module,
        names,
        setup: None,
        old,
        new,
    }
}

const fn fix(
    name: &'static str,
    module: &'static str,
    names: &'static [&'static str],
    setup: &'static str,
    old: &'static str,
    new: &'static str,
) -> Case {
    Case {
        kind: Kind::Fix,
        name,
        module,
        names,
        setup: Some(setup),
        old,
        new,
    }
}

pub(crate) const CASES: &[Case] = &[
    // Body-only.
    case(
        Kind::Body,
        "capfirst: a local for the first letter",
        TEXT,
        &["capfirst"],
        "    return x[0].upper() + x[1:]\n",
        "    first = x[0].upper()\n    return first + x[1:]\n",
    ),
    case(
        Kind::Body,
        "get_random_string: a list comprehension",
        CRYPTO,
        &["get_random_string"],
        "    return \"\".join(secrets.choice(allowed_chars) for i in range(length))",
        "    return \"\".join([secrets.choice(allowed_chars) for _ in range(length)])",
    ),
    case(
        Kind::Body,
        "is_aware: the offset in a local",
        TZ,
        &["is_aware"],
        "    return value.utcoffset() is not None\n",
        "    offset = value.utcoffset()\n    return offset is not None\n",
    ),
    case(
        Kind::Body,
        "avoid_wrapping: split and join",
        HTML,
        &["avoid_wrapping"],
        "    return value.replace(\" \", \"\\xa0\")",
        "    return \"\\xa0\".join(value.split(\" \"))",
    ),
    case(
        Kind::Body,
        "camel_case_to_spaces: two steps",
        TEXT,
        &["camel_case_to_spaces"],
        "    return re_camel_case.sub(r\" \\1\", value).strip().lower()",
        "    spaced = re_camel_case.sub(r\" \\1\", value)\n    return spaced.strip().lower()",
    ),
    // An error in the written file.
    case(
        Kind::Local,
        "capfirst: an undefined name",
        TEXT,
        &["capfirst"],
        "    return x[0].upper() + x[1:]\n",
        "    return x[0].upper() + x[1:] + suffix\n",
    ),
    case(
        Kind::Local,
        "constant_time_compare: an argument missing",
        CRYPTO,
        &["constant_time_compare"],
        "secrets.compare_digest(force_bytes(val1), force_bytes(val2))",
        "secrets.compare_digest(force_bytes(val1))",
    ),
    case(
        Kind::Local,
        "avoid_wrapping: str.join given two arguments",
        HTML,
        &["avoid_wrapping"],
        "    return value.replace(\" \", \"\\xa0\")",
        "    return \"\\xa0\".join(value.split(\" \"), 1)",
    ),
    case(
        Kind::Local,
        "parse_date: a keyword fromisoformat has not",
        DATEPARSE,
        &["parse_date"],
        "        return datetime.date.fromisoformat(value)\n",
        "        return datetime.date.fromisoformat(value, strict=True)\n",
    ),
    case(
        Kind::Local,
        "lazystr: a typo",
        FUNCTIONAL,
        &["lazystr"],
        "    return lazy(str, str)(text)",
        "    return lazzy(str, str)(text)",
    ),
    // A signature other modules call.
    case(
        Kind::Signature,
        "force_str: its encoding parameter removed",
        ENCODING,
        &["force_str"],
        "def force_str(s, encoding=\"utf-8\", strings_only=False, errors=\"strict\"):",
        "def force_str(s, strings_only=False, errors=\"strict\"):",
    ),
    case(
        Kind::Signature,
        "capfirst: a parameter without default",
        TEXT,
        &["capfirst"],
        "def capfirst(x):",
        "def capfirst(x, upper):",
    ),
    case(
        Kind::Signature,
        "avoid_wrapping: its parameter removed",
        HTML,
        &["avoid_wrapping"],
        "def avoid_wrapping(value):",
        "def avoid_wrapping():",
    ),
    case(
        Kind::Signature,
        "get_random_string: returns int",
        CRYPTO,
        &["get_random_string"],
        "def get_random_string(length, allowed_chars=RANDOM_STRING_CHARS):",
        "def get_random_string(length, allowed_chars=RANDOM_STRING_CHARS) -> int:",
    ),
    case(
        Kind::Signature,
        "cached_property: __init__ takes a name too",
        FUNCTIONAL,
        &["cached_property"],
        "    def __init__(self, func):\n        self.real_func = func\n",
        "    def __init__(self, func, name):\n        self.real_func = func\n",
    ),
    // A top-level name other modules import, renamed or deleted.
    case(
        Kind::Rename,
        "html_safe renamed",
        HTML,
        &["html_safe"],
        "def html_safe(klass):",
        "def html_safe_class(klass):",
    ),
    case(
        Kind::Rename,
        "phone2numeric renamed",
        TEXT,
        &["phone2numeric"],
        "def phone2numeric(phone):",
        "def phone_to_numeric(phone):",
    ),
    case(
        Kind::Rename,
        "slugify renamed",
        TEXT,
        &["slugify"],
        "def slugify(value, allow_unicode=False):",
        "def slugify_text(value, allow_unicode=False):",
    ),
    case(
        Kind::Rename,
        "iri_to_uri renamed",
        ENCODING,
        &["iri_to_uri"],
        "def iri_to_uri(iri):",
        "def iri_to_url(iri):",
    ),
    case(
        Kind::Rename,
        "camel_case_to_spaces deleted",
        TEXT,
        &["camel_case_to_spaces"],
        "def camel_case_to_spaces(value):\n    \"\"\"\n    Split CamelCase and convert to lowercase. \
         Strip surrounding whitespace.\n    \"\"\"\n    return re_camel_case.sub(r\" \\1\", \
         value).strip().lower()\n\n\n",
        "",
    ),
    // Comments and docstrings.
    case(
        Kind::Comment,
        "get_text_list: a doctest's expected text",
        TEXT,
        &["get_text_list"],
        "    'a, b, c or d'\n",
        "    'a, b, c or d' (no serial comma)\n",
    ),
    case(
        Kind::Comment,
        "avoid_wrapping: docstring reworded",
        HTML,
        &["avoid_wrapping"],
        "    Avoid text wrapping in the middle of a phrase",
        "    Keep text from wrapping in the middle of a phrase",
    ),
    case(
        Kind::Comment,
        "get_random_string: a comment added",
        CRYPTO,
        &["get_random_string"],
        "    return \"\".join(secrets.choice(allowed_chars) for i in range(length))",
        "    # secrets, not random: the result may be a secret.\n    return \"\".join(secrets.choice(allowed_chars) for i in range(length))",
    ),
    case(
        Kind::Comment,
        "timezone: a comment reworded",
        TZ,
        &["is_aware"],
        "# By design, these four functions don't perform any checks on their arguments.",
        "# By design, these four functions do not check their arguments.",
    ),
    case(
        Kind::Comment,
        "lazystr: docstring reworded",
        FUNCTIONAL,
        &["lazystr"],
        "    Shortcut for the common case of a lazy callable that returns str.",
        "    A shortcut for the common case of a lazy callable returning str.",
    ),
    // Fixes of the session's previous edit.
    fix(
        "get_text_list: the new parameter given a default",
        TEXT,
        &["get_text_list"],
        "def get_text_list(list_, last_word=gettext_lazy(\"or\")):",
        "def get_text_list(list_, sep, last_word=gettext_lazy(\"or\")):",
        "def get_text_list(list_, sep=\", \", last_word=gettext_lazy(\"or\")):",
    ),
    fix(
        "capfirst: the new parameter given a default",
        TEXT,
        &["capfirst"],
        "def capfirst(x):",
        "def capfirst(x, upper):",
        "def capfirst(x, upper=True):",
    ),
    fix(
        "html_safe: renamed back",
        HTML,
        &["html_safe"],
        "def html_safe(klass):",
        "def html_safe_class(klass):",
        "def html_safe(klass):",
    ),
    fix(
        "parse_date: the bad keyword replaced",
        DATEPARSE,
        &["parse_date"],
        "        return datetime.date.fromisoformat(value)\n",
        "        return datetime.date.fromisoformat(value, strict=True)\n",
        "        return datetime.date.fromisoformat(str(value))\n",
    ),
    fix(
        "lazystr: the typo corrected",
        FUNCTIONAL,
        &["lazystr"],
        "    return lazy(str, str)(text)",
        "    return lazzy(str, str)(text)",
        "    return lazy(str, str)(text)",
    ),
];
