// Undo and redo keys for one composer (pgm_explore/widgets/_keys.py: UndoKeys). Loaded by anywidget
// from the package, never fetched.

// Ctrl or Cmd (metaKey, macOS) with Z: undo; with Shift as well: redo; Ctrl-Y: redo (Windows' habit).
// The key, not the key's position, as the browser's own undo reads it (Z sits elsewhere on AZERTY).
function action(event) {
  if (event.altKey || event.isComposing || !(event.ctrlKey || event.metaKey) || typeof event.key !== "string") {
    return null;
  }
  const key = event.key.toLowerCase();
  if (key === "z") return event.shiftKey ? "redo" : "undo";
  if (key === "y" && event.ctrlKey && !event.shiftKey) return "redo";
  return null;
}

export default {
  render({ model, el }) {
    const onKey = (event) => {
      const which = action(event);
      if (which === null) return;
      const target = event.target instanceof Element ? event.target : null;
      const scope = model.get("scope");
      const root = el.closest(scope);
      // Only in this composer: not in a notebook cell, not in a Reply composer shown inside it
      // (that one's own keys answer there), not in a box that keeps the browser's own undo.
      if (!target || !root || target.closest(scope) !== root || target.closest(model.get("skip"))) return;
      // Before the browser undoes the text box's own typing, and before JupyterLab sees the keys.
      event.preventDefault();
      event.stopPropagation();
      // The kernel acts once every value typed before this has arrived (UndoKeys._message).
      model.send({ key: which });
    };
    // The capture phase of the window: first of all listeners, whatever the page adds later.
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  },
};
