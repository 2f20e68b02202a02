"""Credentials never enter memory (seed 004 §5.5): passwords, API keys, tokens, private keys, card numbers and
one-time codes are refused with the name of the rule that fired — never with the secret itself. Text from a
tool or web page that reads like instructions to the model (prompt injection, seed 002) is refused too:
memory is re-read into every later prompt, so it is an attack surface."""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby

from amnesia.errors import InjectionRefused, SecretRefused


@dataclass(frozen=True)
class SecretRule:
    """One detector: a regex, and optionally a test of each match (a value's shape or entropy) that decides
    whether it is a credential."""

    name: str
    """What a refusal names (never the secret)."""
    pattern: re.Pattern[str]
    """Where a credential may be."""
    needles: tuple[str, ...]
    """Lower-case literals (digits written "0") the pattern cannot match without (one of them must occur),
    looked up in the folded text (see `find_secret_rule`) to skip the regex search: a write path runs every
    rule, and the searches were most of `remember`'s time."""
    accept: Callable[[re.Match[str]], bool] | None = None
    """None: every match is a credential; else only the matches it accepts."""

    def fires(self, text: str) -> bool:
        """Whether the text holds a credential by this rule."""
        if self.accept is None:
            return self.pattern.search(text) is not None
        return any(self.accept(match) for match in self.pattern.finditer(text))


def _rule(
    name: str,
    pattern: str,
    *needles: str,
    accept: Callable[[re.Match[str]], bool] | None = None,
    case_sensitive: bool = False,
) -> SecretRule:
    flags = 0 if case_sensitive else re.IGNORECASE
    return SecretRule(name, re.compile(pattern, flags), needles, accept)


def _entropy(text: str) -> float:
    """Shannon entropy of the text's characters, in bits per character."""
    counts = Counter(text)
    size = len(text)
    return -sum(count / size * math.log2(count / size) for count in counts.values())


# A value that stands for a secret rather than being one: a variable (`${X}`, `$X`, `%X%`), a template
# (`%(x)s`, `{{x}}`, `<your key>`), a note in brackets, a path.
_PLACEHOLDER = re.compile(r"\$[{(\w]|%\(|%\w+%|\{\{|[<(\[/]|~/|\.\.?/")
_PLACEHOLDER_WORDS = frozenset(
    {
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "redacted",
        "required",
        "optional",
        "unset",
    }
)
_TRAILING_PUNCTUATION = ".,;:)]}>"


def _is_placeholder(value: str) -> bool:
    return (
        not value
        or _PLACEHOLDER.match(value) is not None
        or value.lower() in _PLACEHOLDER_WORDS
        or len(set(value.lower())) == 1  # xxxxxxxx, ********
    )


def _has_digit(value: str) -> bool:
    return any(char.isdigit() for char in value)


def _password_value(value: str, operator: str, rest: str) -> bool:
    """A password after `password is|:|=`: not a placeholder, and not a word of prose. After "is" (or 是)
    it must hold a digit or a symbol ("is stored" is prose, "is hunter2!" is not); after ":" or "=" a
    bare word counts too when nothing but the end of the line follows it ("password: sunshine")."""
    if len(value) < 4 or _is_placeholder(value):
        return False
    if any(not (char.isalpha() or char in "-'") for char in value):
        return True
    return operator in ":=：" and not rest.startswith((" ", "\t"))


def _token_value(value: str, operator: str, rest: str) -> bool:
    """An API key, token or client secret: at least 8 characters with letters and digits (a number is a
    setting like `max_tokens = 4096`; a word is prose or an enum like `token_type: bearer`)."""
    return (
        len(value) >= 8
        and not _is_placeholder(value)
        and _has_digit(value)
        and any(char.isalpha() for char in value)
    )


# Bits per character a random key has and a word or identifier has not: 40 or more hex digits carry about
# 3.7 to 3.9, a base64 key of 32 bytes about 4.9; an ISO date 2.9, `user_id_and_timestamp` 3.5 (and no digit).
_KEY_MIN_ENTROPY = 3.5
_KEY_MIN_CHARS = 16


def _key_material(value: str, operator: str, rest: str) -> bool:
    """A value after a plain `key is|:|=`: long, mixed letters and digits, and high in entropy (the cache
    key `user:42:profile` or the primary key `user_id` is not a secret; a base64 encryption key is)."""
    return (
        len(value) >= _KEY_MIN_CHARS
        and not _is_placeholder(value)
        and _has_digit(value)
        and any(char.isalpha() for char in value)
        and _entropy(value) >= _KEY_MIN_ENTROPY
    )


_PASSWORD_NAMES = r"pass(?:word|wd|phrase|code)?|pwd|密码|口令"
_TOKEN_NAMES = (
    r"secret[_\- ]?key|client[_\- ]?secret|secret|api[_\- ]?key|apikey|access[_\- ]?key|private[_\- ]?key"
    r"|auth[_\- ]?(?:token|key)|access[_\- ]?token|refresh[_\- ]?token|token|credentials?"
    r"|connection[_\- ]?string|密钥|秘钥|令牌"
)


def _assignment(names: str, first_letters: str) -> str:
    """`<name> is|:|=|是 <value>` for one family of secret names. The name starts a word or a part of an
    identifier (after `_`, `-`, `.`, or a lower-case letter for camelCase: `_starts_a_name` checks, as a
    lookbehind would stop the regex engine from skipping to where a name may start) and ends the identifier
    (DB_PASSWORD, aws_secret_access_key, X-API-Key, "client_secret" in JSON), so `bypass: on`,
    `password_min_length = 12` or `token_type: bearer` never match; `rest` is the character after the
    value. `first_letters` are the letters the names start with: a lookahead for them spares the regex
    engine trying each name at every place."""
    return (
        r"(?=[" + first_letters + r"])(?:" + names + r")(?:s|_?\d)?[\"'`]?"
        r"(?P<operator>[ \t]*(?::=|=>|==?|:|：|是|为|為)|[ \t]+(?:is|was)\b)[ \t]*[\"'`]?"
        r"(?P<value>[^\s\"'`,;]+)(?P<rest>.?)"
    )


def _starts_a_name(text: str, at: int) -> bool:
    """Whether a name at `at` starts a word or a part of an identifier: not after a letter, except a
    lower-case one before an upper-case start (camelCase), and always for a Chinese name."""
    if at == 0 or not text[at].isascii():
        return True
    before = text[at - 1]
    return not (before.isascii() and before.isalpha()) or (before.islower() and text[at].isupper())


def _identifier_before(text: str, end: int) -> str:
    """The letters, digits, `_`, `-` and `.` that run up to `end` (the start of an identifier)."""
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-."):
        start -= 1
    return text[start:end]


def _assigned(value_test: Callable[[str, str, str], bool]) -> Callable[[re.Match[str]], bool]:
    """Accepts an assignment whose value passes `value_test(value, operator, rest)`."""

    def accept(match: re.Match[str]) -> bool:
        value = match["value"].rstrip(_TRAILING_PUNCTUATION)
        operator = match["operator"].strip()
        if not _starts_a_name(match.string, match.start()):
            return False
        if "pub" in _identifier_before(match.string, match.start()).lower():  # public_key, pubkey
            return False
        if not operator.isascii() and not value.isascii():  # 密码是保存在…: prose, not a password
            return False
        return value_test(value, operator, match["rest"])

    return accept


def _url_password(match: re.Match[str]) -> bool:
    return not _is_placeholder(match["password"])


_CURL = re.compile(r"\bcurl\b")


def _curl_password(match: re.Match[str]) -> bool:
    """`-u user:password` of a curl command: on the line of a `curl`, at most 200 characters after it (the
    regex starts at `-u`, so a text of many `curl`s is not scanned again from each)."""
    text, start = match.string, match.start()
    line_start = max(text.rfind("\n", 0, start) + 1, start - 200)
    return _CURL.search(text, line_start, start) is not None and _url_password(match)


def _basic_credentials(match: re.Match[str]) -> bool:
    """Base64 that decodes to printable `user:password` (HTTP Basic, docker's config.json `auth`)."""
    blob = match["blob"]
    try:
        decoded = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return False
    _user, colon, password = decoded.partition(":")
    return bool(colon) and bool(password) and decoded.isprintable()


# Tokens whose vendor prefix says what they are (gitleaks' and GitHub secret scanning's published formats),
# case-sensitive as the formats are, with the literals (folded: lower case, digits "0") they hold; then keys
# known by their shape.
_SHAPED_TOKENS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (r"\bSG\.[\w\-]{22}\.[\w\-]{43}\b", ("sg.",)),  # SendGrid
    (r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    (r"\bpypi-AgEIcHlwaS5vcmc[\w\-]{50,}", ("pypi-",)),
    (r"\bhf_[A-Za-z]{30,}\b", ("hf_",)),  # Hugging Face
    (
        r"\bgl(?:pat|ptt|rt|dt|cbt|ft|imt|oas|soat)-[\w\-]{20,}",
        ("glpat-", "glptt-", "glrt-", "gldt-", "glcbt-", "glft-", "glimt-", "gloas-", "glsoat-"),
    ),
    (r"\bGR1348941[\w\-]{20,}", ("gr0000000",)),  # GitLab runner registration
    (
        r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
        (
            "shpat_",
            "shpss_",
            "shpca_",
            "shppa_",
        ),
    ),  # Shopify
    (r"\b\d{8,10}:AA[\w\-]{33}\b", (":aa",)),  # Telegram bot
    (
        r"\bsq0(?:atp|csp)-[\w\-]{22,}",
        (
            "sq0atp-",
            "sq0csp-",
        ),
    ),  # Square
    (r"\bdo[por]_v1_[a-f0-9]{64}\b", ("_v0_",)),  # DigitalOcean
    (r"\bdapi[a-f0-9]{32}\b", ("dapi",)),  # Databricks
    (r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.",)),  # Doppler
    (r"\blin_api_[A-Za-z0-9]{40}\b", ("lin_api_",)),  # Linear
    (r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ("pmak-",)),  # Postman
    (r"\bpul-[a-f0-9]{40}\b", ("pul-",)),  # Pulumi
    (
        r"\bgl(?:sa|c)_[A-Za-z0-9_=+/]{32,}",
        (
            "glsa_",
            "glc_",
        ),
    ),  # Grafana
    (r"\bNRAK-[A-Z0-9]{27}\b", ("nrak-",)),  # New Relic
    (r"\b[a-z0-9]{14}\.atlasv1\.[\w\-=]{60,}", (".atlasv0.",)),  # Terraform Cloud
    (
        r"\bhv[sbr]\.[\w\-]{24,}",
        (
            "hvs.",
            "hvb.",
            "hvr.",
        ),
    ),  # HashiCorp Vault
    (r"\bdckr_pat_[\w\-]{27,}", ("dckr_pat_",)),  # Docker Hub
    (r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", ("age-secret-key-",)),
    (r"\bLTAI[A-Za-z0-9]{20}\b", ("ltai",)),  # Alibaba Cloud
    (r"\bAKID[A-Za-z0-9]{32}\b", ("akid",)),  # Tencent Cloud
    (r"\bATATT3xFfGF0[\w\-=]{150,}", ("atatt0xffgf0",)),  # Atlassian
    (r"\brubygems_[a-f0-9]{48}\b", ("rubygems_",)),
    (
        r"\bsntr[ysu]_[\w=+/\-]{40,}",
        (
            "sntry_",
            "sntru_",
            "sntrs_",
        ),
    ),  # Sentry
    (r"\bAAAA[\w\-]{7}:APA91b[\w\-]{100,}", (":apa",)),  # Firebase Cloud Messaging server key
    (r"\bsk\.eyJ[\w\-]{20,}\.[\w\-]{20,}", ("sk.eyj",)),  # Mapbox
    (r"\bEAACEdEose0cBA[A-Za-z0-9]{20,}", ("eaacedeose",)),  # Facebook
    (r"\bpscale_(?:tkn|pw|oauth)_[\w\-=.]{32,}", ("pscale_",)),  # PlanetScale
    (r"\bsbp_[a-f0-9]{40}\b", ("sbp_",)),  # Supabase
    (r"\bfigd_[\w\-]{40,}", ("figd_",)),  # Figma
    (r"\bGOCSPX-[\w\-]{28}", ("gocspx-",)),  # Google OAuth client secret
    (r"\b1//0[\w\-]{40,}", ("0//0",)),  # Google OAuth refresh token
    (r"\bgsk_[A-Za-z0-9]{48,}", ("gsk_",)),  # Groq
    (r"\bpplx-[A-Za-z0-9]{40,}", ("pplx-",)),  # Perplexity
    (r"\bxai-[A-Za-z0-9]{60,}", ("xai-",)),
    (r"\br8_[A-Za-z0-9]{37}\b", ("r0_",)),  # Replicate
    (r"\bCFPAT-[\w\-]{43}", ("cfpat-",)),  # Contentful
    (r"\bSK[0-9a-fA-F]{32}\b", ("sk",)),  # Twilio API key
    (r"\b[0-9a-f]{32}-us\d{1,2}\b", ("-us",)),  # Mailchimp
    (r"\bkey-[0-9a-f]{32}\b", ("key-",)),  # Mailgun
)
# Any vendor's `<prefix>_<30+ random letters and digits>` (sk_live_…, zq_live_…): a run with upper case, lower
# case and digits after "_" or "-" (where the regex engine can skip to), then `_vendor_prefixed` checks the
# lower-case prefix word or two before it.
_PREFIXED_RUN = (
    r"[_\-](?=[A-Za-z0-9]{0,60}[0-9])(?=[A-Za-z0-9]{0,60}[A-Z])(?=[A-Za-z0-9]{0,60}[a-z])[A-Za-z0-9]{30,}"
)
_VENDOR_PREFIX = re.compile(r"(?<![\w\-])[a-z][a-z0-9]{1,9}(?:_[a-z0-9]{2,8})?$")


def _vendor_prefixed(match: re.Match[str]) -> bool:
    start = match.start()
    return _VENDOR_PREFIX.search(match.string, max(0, start - 20), start) is not None


RULES: tuple[SecretRule, ...] = (
    _rule(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d",
        "-----begin",
        "putty-user-key-file-",
    ),
    _rule(
        "aws-access-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        "akia",
        "asia",
        "abia",
        "acca",
        case_sensitive=True,
    ),
    _rule("api-key", r"\b(?:sk|pk|rk)-(?:[a-z]+-)?[A-Za-z0-9_\-]{20,}", "sk-", "pk-", "rk-"),
    _rule("api-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "sk_", "rk_"),
    _rule("api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b", "aiza"),
    *(_rule("api-key", pattern, *needles, case_sensitive=True) for pattern, needles in _SHAPED_TOKENS),
    _rule("api-key", _PREFIXED_RUN, "_", "-", accept=_vendor_prefixed, case_sensitive=True),
    _rule(  # Azure AD client secret
        "api-key", r"(?<![\w~.])[\w~.]{3}\dQ~[\w~.\-]{31,34}(?![\w~.\-])", "q~", case_sensitive=True
    ),
    _rule(
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
    ),
    _rule("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}|\bxapp-\d-[A-Za-z0-9\-]{10,}", "xox", "xapp-"),
    _rule(
        "webhook-url",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[\w/\-]{20,}"
        r"|discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{20,}",
        "hooks.slack.com/",
        "/api/webhooks/",
    ),
    _rule("bearer-token", r"\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*", "bearer"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "eyj"),
    _rule(
        "basic-auth",
        r"(?:\bbasic\s+|\"auth\"\s*:\s*\")(?P<blob>[A-Za-z0-9+/]{8,}={0,2})",
        "basic",
        '"auth"',
        accept=_basic_credentials,
    ),
    _rule(
        "auth-header",
        r"\bauthorization\s*[:=]\s*[\"']?(?:token|digest|apikey|api-key|bot|sso-key)\s+[\w.~+/=\-:]{8,}",
        "authorization",
    ),
    _rule(
        "url-password",
        # Bounded scheme (and a start where no scheme letter precedes), so a long run of letters far from
        # "://" is not scanned again from each of its positions.
        r"(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]{0,30}://[^\s:/?#@]*:(?P<password>[^\s/?#@]+)@",
        "://",
        accept=_url_password,
    ),
    _rule(
        "password",
        r"\s(?:-u|--user)[ =]?[\"']?[^\s:\"']+:(?P<password>[^\s\"']{3,})",
        "curl",
        accept=_curl_password,
    ),
    _rule("password", r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+\S+", "pass"),
    _rule(
        "password",
        _assignment(_PASSWORD_NAMES, "pP密口"),
        "pass",
        "pwd",
        "密码",
        "口令",
        accept=_assigned(_password_value),
    ),
    _rule(
        "api-key",
        _assignment(_TOKEN_NAMES, "sScCaApPrRtT密秘令"),
        "secret",
        "key",
        "token",
        "credential",
        "connection",
        "密钥",
        "秘钥",
        "令牌",
        accept=_assigned(_token_value),
    ),
    _rule("key-material", _assignment("key", "kK"), "key", accept=_assigned(_key_material)),
    _rule("password", r"\bpin(?:\s*code)?\s*(?:is|[:=])\s*\d{4,}", "pin"),
    _rule(
        "one-time-code",
        r"\b(?:verification|one[- ]time|otp|2fa|security)\s+code\s*(?:is|[:=])?\s*\d{4,8}\b",
        "code",
    ),
    _rule("signed-url", r"[?&]sig=[\w%+/=\-]{20,}", "sig="),
    _rule("one-time-code", r"(?:验证码|动态码)\s*(?:是|为|[:=：])?\s*\d{4,8}", "验证码", "动态码"),
)

_NEEDLES = tuple(sorted({needle for rule in RULES for needle in rule.needles}))


# Bytes of folded English text, most frequent first (digits are "0"; a byte not listed counts as rarer
# than any).
_LETTER_FREQUENCY = b" .etaoinshrdlcu0,mwfgypbvk:jxqz"


def _rarest(needle: bytes) -> int:
    """Position of the needle's rarest byte in ordinary text (the first of equals)."""

    def rarity(at: int) -> tuple[int, int]:
        rank = _LETTER_FREQUENCY.find(needle[at : at + 1])
        return (len(_LETTER_FREQUENCY) if rank < 0 else rank), -at

    return max(range(len(needle)), key=rarity)


def _literal_gate(needles: tuple[str, ...]) -> re.Pattern[bytes]:
    """One search for every ASCII literal at once. Each literal is looked for from its rarest byte: the
    literals are grouped by that byte, and each is matched forward from it, then checked whole by a lookbehind
    (`k(?:en(?<=token)|ia(?<=akia))|...`). The regex engine stops only where one of those rarer bytes occurs,
    and there tries only the literals that it can be part of, each first by its next byte (an alternative that
    starts with a literal byte is skipped at once when that byte is not there)."""
    pieces = sorted(
        (needle[cut:], needle)
        for needle in (needle.encode() for needle in needles if needle.isascii())
        for cut in (_rarest(needle),)
    )
    branches = [
        re.escape(first)
        + b"(?:"
        + b"|".join(
            re.escape(rest[1:]) + (b"(?<=" + re.escape(needle) + b")" if len(needle) > len(rest) else b"")
            for rest, needle in group
        )
        + b")"
        for first, group in groupby(pieces, key=lambda piece: piece[0][:1])
    ]
    return re.compile(b"|".join(branches))


# Most text holds none of the literals, and then no rule with literals can match: one search on the
# lower-cased bytes says so. Only when it finds one are the literals present looked up one by one.
_NEEDLE_GATE = _literal_gate(_NEEDLES)


def _needles_by_rarest_byte(needles: tuple[str, ...]) -> dict[int, tuple[tuple[bytes, frozenset[int]], ...]]:
    """Each ASCII literal, encoded, with the positions in RULES of the rules that hold it, under its rarest
    byte: a text can hold only the literals whose rarest byte it holds."""
    groups: dict[int, list[tuple[bytes, frozenset[int]]]] = {}
    for needle in (needle.encode() for needle in needles if needle.isascii()):
        rules = frozenset(at for at, rule in enumerate(RULES) if needle.decode() in rule.needles)
        groups.setdefault(needle[_rarest(needle)], []).append((needle, rules))
    return {byte: tuple(group) for byte, group in groups.items()}


_NEEDLES_BY_BYTE = _needles_by_rarest_byte(_NEEDLES)
_NON_ASCII_NEEDLES = tuple(
    (needle, frozenset(at for at, rule in enumerate(RULES) if needle in rule.needles))
    for needle in _NEEDLES
    if not needle.isascii()
)
_NOT_RAREST = bytes(byte for byte in range(256) if byte not in _NEEDLES_BY_BYTE)  # deleted by translate
# ASCII lower-casing (str.lower() on ASCII text) with every digit made "0".
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ123456789", b"abcdefghijklmnopqrstuvwxyz000000000")

# Payment cards: 13 to 19 digits, optionally in groups, that pass the Luhn check, start with an issuer's
# number (Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37, Discover 6011/65/644-649, JCB 35, Diners
# 30/36/38, UnionPay 62) and are not part of a longer number or a decimal (0.4532…, a version 1.4111…).
# Laid out as a card (4-4-4-4, 4-6-5) they count alone; a bare run of digits only next to a word that says
# card (a 16-digit order id or a nanosecond timestamp passes Luhn one time in ten).
_CARD = re.compile(r"(?<![\d.,])(?:\d[ \-]?){12,18}\d(?![\d]|[.,]\d)")
_CARD_GROUPED = re.compile(r"\d{4}([ \-])\d{4}\1\d{4}\1\d{1,7}|\d{4}([ \-])\d{6}\2\d{4,5}")
_CARD_ISSUER = re.compile(
    r"4|5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|6011|65|64[4-9]|35|3[068]|62"
)
_CARD_CONTEXT = re.compile(
    r"\b(?:card|cards|visa|master ?card|amex|american express|discover|credit|debit|cc|cvv|cvc|cvv2"
    r"|exp|expiry|expires|pan)\b|卡",
    re.IGNORECASE,
)
_CARD_CONTEXT_CHARS = 40
_CARD_MIN_DIGITS = 13


def _luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def find_card_number(text: str) -> bool:
    """Whether the text holds a payment card number (see `_CARD`)."""
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if not (_CARD_MIN_DIGITS <= len(digits) <= 19 and _CARD_ISSUER.match(digits) and _luhn_ok(digits)):
            continue
        if _CARD_GROUPED.fullmatch(match.group()):
            return True
        start, end = match.span()
        around = text[max(0, start - _CARD_CONTEXT_CHARS) : end + _CARD_CONTEXT_CHARS]
        if _CARD_CONTEXT.search(around):
            return True
    return False


def find_secret_rule(text: str) -> str | None:
    """The name of the first rule the text trips, or None when it looks safe to store."""
    if text.isascii():  # only the rules one of whose literals occurs can match
        # Lower-cased, digits as "0": the literals (written so) are found as in the lower-cased text, and
        # the digits are counted in one pass.
        folded = text.encode().translate(_FOLD)  # ASCII: UTF-8 gives the same bytes, with no codec lookup
        rules = () if _NEEDLE_GATE.search(folded) is None else _rules_present(folded)
        if not rules and folded.count(b"0") < _CARD_MIN_DIGITS:
            return None  # no literal, and too few digits for a card number
    else:
        rules = _rules_present(_ascii_fold(text), text)
    for rule in rules:
        if rule.fires(text):
            return rule.name
    return "payment-card" if find_card_number(text) else None


# The characters other than ASCII letters that IGNORECASE matches to ASCII letters (ſ to s, the Kelvin sign
# to k, dotted and dotless i to i): a rule can match non-ASCII text without the literal as written.
_ASCII_TWINS = {0x17F: "s", 0x212A: "k", 0x130: "i", 0x131: "i"}


def _ascii_fold(text: str) -> bytes:
    """Non-ASCII text folded as `_FOLD` folds ASCII text, every other non-ASCII character made "?"."""
    return text.translate(_ASCII_TWINS).encode("ascii", "replace").translate(_FOLD)


def _rules_present(folded: bytes, text: str | None = None) -> tuple[SecretRule, ...]:
    """The rules one of whose literals occurs in the folded text (see `find_secret_rule`): ASCII literals
    in `folded`, the others (密码, 验证码…) in the non-ASCII `text` when given. A function of its own:
    comprehensions over `find_secret_rule`'s locals would make it allocate closure cells on every call."""
    present = frozenset().union(
        *[
            rules
            for byte in set(folded.translate(None, _NOT_RAREST))
            for needle, rules in _NEEDLES_BY_BYTE[byte]
            if needle in folded
        ],
        *([] if text is None else [rules for needle, rules in _NON_ASCII_NEEDLES if needle in text]),
    )
    return tuple(RULES[at] for at in sorted(present))


def refuse_secrets(text: str, field: str = "content") -> None:
    """Raise SecretRefused (naming the field and the rule, never the secret) if the text carries a
    credential."""
    rule = find_secret_rule(text)
    if rule is not None:
        raise SecretRefused(rule, field)


INJECTION_RULES: dict[str, re.Pattern[str]] = {
    "injection-ignore-previous": re.compile(
        r"\b(ignore|disregard|forget|override)\b.{0,20}\b(previous|prior|above|earlier|all)\b.{0,20}"
        r"\b(instructions?|rules?|prompts?|messages?)\b",
        re.IGNORECASE,
    ),
    "injection-role-override": re.compile(r"\byou are now\b|\bact as (the )?system\b", re.IGNORECASE),
    "injection-system-prompt": re.compile(
        r"\b(reveal|print|show|leak)\b.{0,20}\bsystem prompt\b", re.IGNORECASE
    ),
    "injection-chat-markup": re.compile(
        r"<\|(im_start|im_end|system)\|>|\[/?INST\]|<</?SYS>>", re.IGNORECASE
    ),
    "injection-new-instructions": re.compile(r"\bnew (system )?instructions?\s*:", re.IGNORECASE),
    "injection-addressed-to-model": re.compile(
        r"\b(note|message|instructions?)\s+(to|for)\s+(the\s+)?(ai|assistant|model|llm|chatbot)\b",
        re.IGNORECASE,
    ),
    "injection-zh-ignore": re.compile(
        r"(忽略|无视|忘记)(之前|以上|先前|前面|所有)的?(指令|规则|说明|提示|设置)"
    ),
    "injection-zh-role": re.compile(r"你现在是|从现在起你是"),
}


def find_injection_rule(text: str) -> str | None:
    """The name of the first prompt-injection pattern the text trips, or None."""
    for name, pattern in INJECTION_RULES.items():
        if pattern.search(text):
            return name
    return None


def refuse_injection(text: str) -> None:
    """Raise InjectionRefused (naming the rule) if untrusted text reads like instructions to the model."""
    rule = find_injection_rule(text)
    if rule is not None:
        raise InjectionRefused(rule)
