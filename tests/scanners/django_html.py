# An excerpt of Django 5.2's django/utils/html.py (lines 283-331 and 469-484, verbatim), for the
# scanners that read code through the lexer (src/ops/scanner_fixtures.rs): the raw string
# r"""([\s<>"']+)""" of line 300 once left a scanner inside a bracket for the rest of the file.
# Django is Copyright (c) Django Software Foundation and individual contributors, under the
# BSD 3-Clause License (https://github.com/django/django/blob/main/LICENSE).
#
# What each scanner finds (`# expect KIND: VALUE`, as in python.py), the declarations after the
# raw string included:
# expect name: Urlizer
# expect name: urlizer
# expect name: urlize
# expect name: avoid_wrapping
# expect import: django/utils/text
# expect import: django/utils/text/normalize_newlines
# expect decl: class Urlizer:
# expect decl: urlizer = Urlizer()
# expect decl: def urlize(text, trim_url_limit=None, nofollow=False, autoescape=False):
# expect decl: def avoid_wrapping(value):
# expect decl: from django.utils.text import normalize_newlines
# expect call: _lazy_re_compile(r"^https?://\[?\w", re.IGNORECASE)
# expect call: _lazy_re_compile(r"^www\.|^(?!http)\w[^@]+\.(com|edu|gov|int|mil|net|org)($|/.*)$", re.IGNORECASE)
# expect call: _lazy_re_compile(r"""([\s<>"']+)""")
# expect call: isinstance(text, SafeData)
# expect call: split(str(text))
# expect call: str(text)
# expect call: get(word)
# expect call: handle_word(word, safe_input=safe_input, trim_url_limit=trim_url_limit, nofollow=nofollow, autoescape=autoescape)
# expect call: append(urlized_word)
# expect call: join(urlized_words)
# expect call: Urlizer()
# expect call: urlizer(text, trim_url_limit=trim_url_limit, nofollow=nofollow, autoescape=autoescape)
# expect call: replace(" ", "\xa0")


class Urlizer:
    """
    Convert any URLs in text into clickable links.

    Work on http://, https://, www. links, and also on links ending in one of
    the original seven gTLDs (.com, .edu, .gov, .int, .mil, .net, and .org).
    Links can have trailing punctuation (periods, commas, close-parens) and
    leading punctuation (opening parens) and it'll still do the right thing.
    """

    trailing_punctuation_chars = ".,:;!"
    wrapping_punctuation = [("(", ")"), ("[", "]")]

    simple_url_re = _lazy_re_compile(r"^https?://\[?\w", re.IGNORECASE)
    simple_url_2_re = _lazy_re_compile(
        r"^www\.|^(?!http)\w[^@]+\.(com|edu|gov|int|mil|net|org)($|/.*)$", re.IGNORECASE
    )
    word_split_re = _lazy_re_compile(r"""([\s<>"']+)""")

    mailto_template = "mailto:{local}@{domain}"
    url_template = '<a href="{href}"{attrs}>{url}</a>'

    def __call__(self, text, trim_url_limit=None, nofollow=False, autoescape=False):
        """
        If trim_url_limit is not None, truncate the URLs in the link text
        longer than this limit to trim_url_limit - 1 characters and append an
        ellipsis.

        If nofollow is True, give the links a rel="nofollow" attribute.

        If autoescape is True, autoescape the link text and URLs.
        """
        safe_input = isinstance(text, SafeData)

        words = self.word_split_re.split(str(text))
        local_cache = {}
        urlized_words = []
        for word in words:
            if (urlized_word := local_cache.get(word)) is None:
                urlized_word = self.handle_word(
                    word,
                    safe_input=safe_input,
                    trim_url_limit=trim_url_limit,
                    nofollow=nofollow,
                    autoescape=autoescape,
                )
                local_cache[word] = urlized_word
            urlized_words.append(urlized_word)
        return "".join(urlized_words)

    # [... Urlizer's other methods, html.py lines 332-468, left out ...]


urlizer = Urlizer()


@keep_lazy_text
def urlize(text, trim_url_limit=None, nofollow=False, autoescape=False):
    return urlizer(
        text, trim_url_limit=trim_url_limit, nofollow=nofollow, autoescape=autoescape
    )


def avoid_wrapping(value):
    """
    Avoid text wrapping in the middle of a phrase by adding non-breaking
    spaces where there previously were normal spaces.
    """
    return value.replace(" ", "\xa0")


# Not Django's: an import after the raw string, for the import scanner.
from django.utils.text import normalize_newlines
