"""Strings a YAML reader could take for something else, and strings that must stay plain."""

from __future__ import annotations

# Every one of these must be quoted (or be a literal block) and read back as the same string.
HAZARDS: list[str] = [
    # YAML 1.1 / 1.2 booleans and nulls, in the casings readers accept (and some they do not)
    *"on On ON off Off OFF yes Yes YES no No NO y Y n N true True TRUE false False FALSE".split(),
    *"null Null NULL ~ yEs nULL".split(),
    "",
    # numbers: ints, octal, hex, binary, underscores, floats, exponents, specials, sexagesimal
    *"0 1 -1 +1 007 0755 0o17 0x1F 0X1f -0x1F 0b101 -0b1 1_000 1__0 1_ -_ +_ -__ +_1".split(),
    *"0.5 .5 -.5 1. 1e3 1E3 1e-3 1.0e+3 -1.5e3 6.8523015e+5 685_230.15".split(),
    *".inf .Inf -.inf +.inf .nan .NaN NaN nan Inf inf infinity -Infinity".split(),
    *"190:20:30 1:20 12:30 -1:30 1:2:3.5".split(),
    # dates and times
    *"2024-01-01 2001-12-14t21:59:43.10-05:00 2001-12-14 2002-12-14T21:59:43Z".split(),
    "2001-12-14 21:59:43.10 -5",
    # YAML 1.1 merge and value keys
    "<<", "=",
    # indicators at the start
    *"- ? : , [ ] { } # & * ! | > ' \" % @ `".split(),
    "-x ", "- x", "-", "? x", ": x", ",x", "[x]", "{x: 1}", "#x", "&a", "*a", "!tag", "!!str", "|x", ">x",
    "'x'", '"x"', "%YAML 1.1", "@x", "`x`",
    "---", "--- x", "...", "... x", "---x",
    # ': ' and ' #' inside, trailing ':' or spaces, leading spaces, tabs
    "a: b", "a:", "key::", "a #b", "http://x:80 #frag", " a", "a ", "  ", "\t", "a\tb", "a\t",
    # multi-line: literal-block candidates and ones that must be quoted
    "a\nb", "a\nb\n", "a\n\nb\n", "a\nb\n\n", "\na", " a\nb", "a \nb", "a\n b", "a\n\tb", "a\r\nb",
    "line\n", "\n", "\n\n", "#!/bin/sh\nset -e\necho 'on'\n", "key: value\n- item\n",
    # unicode, line separators, BOM, control characters, astral plane
    "é", "日本語", "\u00a0", "a\u00a0", "\u2028", "a\u2029b", "\ufeffx", "\x85", "a\x85b", "\x00", "\x07",
    "\x1b[31m", "\x7f", "\x9f", "😀", "x😀\ny", "\ufffd", "\ue000",
    # backslashes and quotes in front
    "\\", "\\x", '"hi" there', "'hi' there",
]

# These must come out plain (unquoted), exactly as written.
PLAIN: list[str] = [
    "apps/v1", "Deployment", "sklearn-iris-predictor", "serving.kserve.io/inferenceservice",
    "kserve/sklearnserver:v0.14.1", "gs://bucket/models/sklearn/1.0/model",
    "http://x.svc:8080/v1/models/m:predict",
    "/mnt/models", "--model_name=sklearn-iris", "-v", "$(POD_NAME)", "500m", "2Gi", "1.5Gi", "100Mi", "30s",
    "isvc.model-predictor", "a b", "RawDeployment", "_private", "x.y.z", "a,b", "a[0]", "ns/name#frag",
    "+x", "--", "_", "__", "_1", "_a", "a\\nb", 'say "hi"', "it's", "C:\\path",
    "yes-please", "onboarding", "nullable", "true-ish", "v1", "0.5Gi",
]
