"""The one frontmatter parser: the key lines the reader and the entry merge driver both read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memsync.formats.markdown.fields import parse_frontmatter
from memsync.formats.markdown.frontmatter import key_blocks, line_key


def test_a_key_line_is_yaml_s_text_before_the_first_colon() -> None:
    assert line_key("name: Timezone\n") == ("name", "Timezone")
    assert line_key("name :  a: b  \r\n") == ("name", "a: b")
    assert line_key("metadata:\r\n") == ("metadata", "")
    assert line_key("my key: v") == ("my key", "v")
    assert line_key("url: http://example.com") == ("url", "http://example.com")
    for not_a_key in ("# name: x\n", "- name: x\n", "  name: x\n", "name:x\n", "http://x\n", "\n", ""):
        assert line_key(not_a_key) is None, not_a_key


def test_blocks_hold_a_key_line_with_its_indented_and_list_lines() -> None:
    yaml = "name: n\ntags:\n- a\n  - b\n# note\n  stray\nmetadata:\r\n  type: user\r\n\nx: 1"
    assert key_blocks(yaml) == [
        ("name", "name: n\n"),
        ("tags", "tags:\n- a\n  - b\n"),
        (None, "# note\n"),
        (None, "  stray\n"),
        ("metadata", "metadata:\r\n  type: user\r\n"),
        (None, "\n"),
        ("x", "x: 1"),
    ]


def test_the_reader_takes_keys_by_the_same_rule_when_the_yaml_is_invalid() -> None:
    front = parse_frontmatter("---\r\nname: n: x\r\nmetadata:\r\n  type: user\r\n---\r\n")
    assert front.problems and front.problems[0][1].startswith("frontmatter is not valid YAML")
    assert (front.name, front.type, front.type_source) == ("n: x", "user", "metadata.type")


@given(st.text(alphabet="ab: -#\t\r\n"))
def test_blocks_give_the_yaml_back(yaml: str) -> None:
    assert "".join(text for _, text in key_blocks(yaml)) == yaml
