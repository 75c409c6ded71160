// A password box whose text never becomes widget state (pgm_explore/widgets/_secret.py: SecretBox).
// Loaded by anywidget from the package, never fetched. What is typed lives in the page's <input>
// and travels to the kernel as a message; the model holds the label and the placeholder only, so
// that JupyterLab's "Save Widget State Automatically", Voilà and nbconvert have no token to write.

export default {
  initialize({ model }) {
    // A page opened (again) shows an empty box: the kernel forgets what an earlier page sent, so
    // that Connect never sends a text this page does not show. A model read from a saved notebook
    // has no kernel to tell.
    try {
      model.send({ typed: "" });
    } catch (_error) {}
  },
  render({ model, el }) {
    el.classList.add("widget-inline-hbox", "widget-text", "widget-password");
    const label = document.createElement("label");
    label.className = "widget-label";
    label.style.width = "auto";
    const input = document.createElement("input");
    input.type = "password";
    input.autocomplete = "off";
    input.spellcheck = false;
    const show = () => {
      label.textContent = model.get("description");
      label.style.display = model.get("description") ? "" : "none";
      input.placeholder = model.get("placeholder");
    };
    show();
    // Every keystroke, as a Text box sends its value, but as a message: never kept in the model.
    const typed = () => model.send({ typed: input.value });
    const told = (message) => {
      if (message && message.clear) input.value = "";
    };
    input.addEventListener("input", typed);
    model.on("change:description", show);
    model.on("change:placeholder", show);
    model.on("msg:custom", told);
    el.append(label, input);
    return () => {
      input.removeEventListener("input", typed);
      model.off("change:description", show);
      model.off("change:placeholder", show);
      model.off("msg:custom", told);
    };
  },
};
