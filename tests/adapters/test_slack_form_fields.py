"""`slack_payloads.form_fields` reads a form exactly as `parse_qsl` does, however it is encoded."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from hypothesis import example, given, settings
from hypothesis import strategies as st

from adapters.slack_payloads import form_fields


@settings(max_examples=300, deadline=None, database=None)
@given(fields=st.lists(st.tuples(st.text(), st.text()), max_size=5))
def test_an_encoded_form_reads_as_parse_qsl_reads_it(fields: list[tuple[str, str]]) -> None:
    text = urlencode(fields)
    assert form_fields(text) == dict(parse_qsl(text, keep_blank_values=True))


@settings(max_examples=300, deadline=None, database=None)
@example(text="a=%zz&b=%4&c=%C3%A9%ff+x")
@example(text="x=\\x41%41&y=caf\u00e9&&=v&w")
@given(text=st.text(alphabet=st.sampled_from("ab=&%+\\x4AfFz9\u00e9;")))
def test_any_text_reads_as_parse_qsl_reads_it(text: str) -> None:
    assert form_fields(text) == dict(parse_qsl(text, keep_blank_values=True))
