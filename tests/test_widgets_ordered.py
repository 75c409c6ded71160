"""Ordered clicks: a click from the browser acts only once every text box the browser sent a
value from has echoed a token through its own model (pgm_explore.widgets._ordered). The browser
is played here by the messages it sends (``set_state``, a click message, an undo key's message);
tests/e2e/test_save_after_typing.py clicks and tests/e2e/test_composer_keys.py presses keys in a real one."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ipywidgets")


from pgm_explore.widgets import MessageComposer, _ordered
from pgm_explore.widgets._keys import UndoKeys
from pgm_explore.widgets._secret import SecretBox


@pytest.fixture(autouse=True)
def _nothing_typed_yet():
    """Each test starts with no box waited for, as a new kernel does."""
    _ordered._typed.clear()
    _ordered._waits.clear()


def _browser_click(button: _ordered.OrderedButton) -> None:
    """The message a browser sends when the button is clicked."""
    button._handle_button_msg(button, {"event": "click"}, [])


def _browser_echoes(box: _ordered.OrderedText) -> None:
    """The front-end link copies the token to the box's model, which syncs it like a keystroke."""
    assert _ordered._ping is not None
    box.set_state({"_pgmx_echo": _ordered._ping.value})


def test_a_browser_click_waits_for_the_values_typed_before_it(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    composer = MessageComposer("PC Prompt", draft_dir=False)
    prompt = composer._form.ctx.fields[("Prompt",)].editor
    composer._toolbar.save_path.set_state({"value": "typed.json"})
    prompt.set_state({"value": "Meet at noo"})
    _browser_click(composer._toolbar.save)
    assert not (tmp_path / "typed.json").exists()  # not yet: the browser may hold a keystroke back
    _browser_echoes(composer._toolbar.save_path)
    assert not (tmp_path / "typed.json").exists()  # the prompt has not echoed yet
    prompt.set_state({"value": "Meet at noon", "_pgmx_echo": _ordered._ping.value})  # the held-back keystroke
    assert json.loads((tmp_path / "typed.json").read_text(encoding="utf-8"))["Prompt"] == "Meet at noon"


def test_clicks_are_released_in_order_and_once() -> None:
    done: list[int] = []
    box = _ordered.OrderedText()
    button = _ordered.OrderedButton()
    button.on_click(lambda _b: done.append(len(done)))
    box.set_state({"value": "a"})
    _browser_click(button)
    box.set_state({"value": "ab"})
    _browser_click(button)
    assert done == []
    _browser_echoes(box)  # the second token answers both
    assert done == [0, 1]
    _browser_echoes(box)  # a second browser answering the same token releases nothing again
    assert done == [0, 1]


def test_a_click_acts_at_once_when_nothing_was_typed_or_when_made_in_python() -> None:
    done: list[str] = []
    button = _ordered.OrderedButton()
    button.on_click(lambda _b: done.append("clicked"))
    _browser_click(button)
    assert done == ["clicked"]
    _ordered.OrderedText().set_state({"value": "typed"})
    button.click()
    assert done == ["clicked", "clicked"]


def test_the_ping_is_made_again_after_its_widget_is_closed() -> None:
    box = _ordered.OrderedText()
    box.set_state({"value": "x"})
    _ordered.after_browser(lambda: None)
    _browser_echoes(box)
    first = _ordered._ping
    assert first is not None
    first.close()
    done: list[str] = []
    box.set_state({"value": "xy"})
    _ordered.after_browser(lambda: done.append("released"))
    assert _ordered._ping is not first
    _browser_echoes(box)
    assert done == ["released"]


def test_a_box_closed_while_a_click_waits_for_it_lets_the_click_go_on() -> None:
    done: list[str] = []
    box, other = _ordered.OrderedText(), _ordered.OrderedText()
    box.set_state({"value": "a"})
    other.set_state({"value": "b"})
    _ordered.after_browser(lambda: done.append("released"))
    _browser_echoes(other)
    assert done == []
    box.close()  # its echo will never come
    assert done == ["released"]


def _browser_key(composer: MessageComposer, key: str, message: object = None) -> None:
    """The message the composer's key widget sends when Ctrl-Z (``"undo"``) or Shift-Ctrl-Z (``"redo"``) is pressed."""
    (keys,) = [w for w in composer.children if isinstance(w, UndoKeys)]
    keys._handle_custom_msg({"key": key} if message is None else message, [])


def test_an_undo_key_waits_for_the_values_typed_before_it() -> None:
    composer = MessageComposer("PC Prompt", draft_dir=False)
    prompt = composer._form.ctx.fields[("Prompt",)].editor
    prompt.set_state({"value": "Meet at noo"})
    _browser_key(composer, "undo")
    assert composer.value["Prompt"] == "Meet at noo"  # not yet: the browser may hold a keystroke back
    prompt.set_state({"value": "Meet at noon", "_pgmx_echo": _ordered._ping.value})  # the held-back keystroke
    assert composer.value["Prompt"] == "" and prompt.value == ""  # the typing, all of it, is undone
    _browser_key(composer, "redo")  # nothing typed since: at once
    assert composer.value["Prompt"] == "Meet at noon"
    _browser_key(composer, "paste")  # not a key of ours, nor is a message that is not an object
    _browser_key(composer, "undo", ["undo"])
    assert composer.value["Prompt"] == "Meet at noon" and composer.errors == []


def test_connect_waits_for_the_token_typed_before_it_which_never_enters_the_widget_state() -> None:
    """The Token box (a SecretBox) sends its text as a message of its own model: a Connect clicked
    after it waits for that model's echo, and takes the text; the model's state never holds it."""
    taken: list[str] = []
    box = SecretBox()
    button = _ordered.OrderedButton()
    button.on_click(lambda _b: taken.append(box.take()))
    box._handle_custom_msg({"typed": "tok-se"}, [])
    _browser_click(button)
    assert taken == []  # not yet: the box has not echoed
    box._handle_custom_msg({"typed": "tok-secret"}, [])
    _browser_echoes(box)
    assert taken == ["tok-secret"] and box.typed == ""
    box._handle_custom_msg({"typed": "tok-secret"}, [])
    box._handle_custom_msg({"typed": 42}, [])  # not text: ignored
    assert box.typed == "tok-secret"
    assert "tok-secret" not in json.dumps(box.get_state(), default=str)
