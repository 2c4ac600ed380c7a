"""Types into the real window the way a keyboard does: X's XTEST extension, through the X server,
GTK and WebKit — not WebDriver, whose element lookups and checks cost the web process ~10 ms of
CPU a key (docs/benchmarks.md), which a person's keystroke does not pay.

A line-based helper for bench/app.mjs. Each request on stdin is one JSON object, answered by one
JSON line on stdout once done:
  {"focus": PID}                  X input focus to PID's toplevel window -> {"window": id}
  {"text": "…", "delay_ms": 16}   types the text, a key every delay_ms  -> {"sent": [epoch ms, …]}
  {"key": "Return"}               one named key                          -> {"sent": [epoch ms]}
"sent" is when each key was pressed, on the wall clock the page's performance.timeOrigin uses.
"""

import json
import sys
import time

from Xlib import X, XK, display
from Xlib.error import XError
from Xlib.ext import xtest

NAMED = {"\n": "Return", " ": "space"}


def toplevel_of(d, pid):
    """The mapped window whose _NET_WM_PID is pid (GTK sets it), largest first."""
    wm_pid = d.intern_atom("_NET_WM_PID")
    found = []
    stack = [d.screen().root]
    while stack:
        window = stack.pop()
        try:
            prop = window.get_full_property(wm_pid, X.AnyPropertyType)
            attrs = window.get_attributes()
            if prop and prop.value[0] == pid and attrs.map_state == X.IsViewable:
                geometry = window.get_geometry()
                found.append((geometry.width * geometry.height, window))
            stack.extend(window.query_tree().children)
        except XError:
            continue  # the window went away while the tree was read
    if not found:
        raise SystemExit(f"no mapped window of pid {pid}")
    return max(found, key=lambda f: f[0])[1]


def keycode_for(d, char_or_name):
    """(keycode, needs shift) for a character or a keysym name."""
    name = NAMED.get(char_or_name, char_or_name)
    keysym = XK.string_to_keysym(name)
    if keysym == 0 and len(char_or_name) == 1:
        keysym = ord(char_or_name)
    for keycode, index in d.keysym_to_keycodes(keysym):
        if index in (0, 1):
            return keycode, index == 1
    raise SystemExit(f"no key types {char_or_name!r}")


def press(d, shift_code, key):
    keycode, shift = key
    sent = time.time() * 1000
    if shift:
        xtest.fake_input(d, X.KeyPress, shift_code)
    xtest.fake_input(d, X.KeyPress, keycode)
    xtest.fake_input(d, X.KeyRelease, keycode)
    if shift:
        xtest.fake_input(d, X.KeyRelease, shift_code)
    d.sync()
    return sent


def main():
    d = display.Display()
    if not d.query_extension("XTEST").present:
        raise SystemExit("the X server has no XTEST")
    shift_code = d.keysym_to_keycode(XK.string_to_keysym("Shift_L"))
    for line in sys.stdin:
        request = json.loads(line)
        if "focus" in request:
            window = toplevel_of(d, request["focus"])
            window.set_input_focus(X.RevertToParent, X.CurrentTime)
            d.sync()
            reply = {"window": window.id}
        elif "text" in request:
            delay = request.get("delay_ms", 0) / 1000
            keys = [keycode_for(d, c) for c in request["text"]]
            sent = []
            for i, key in enumerate(keys):
                if i and delay:
                    # Paced from the first key, so a slow press does not slow the rest.
                    time.sleep(max(0.0, sent[0] / 1000 + i * delay - time.time()))
                sent.append(press(d, shift_code, key))
            reply = {"sent": sent}
        else:
            reply = {"sent": [press(d, shift_code, keycode_for(d, request["key"]))]}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
