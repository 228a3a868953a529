// Small enhancements; every page works without them.

// The page's words for what the script writes, in the page's language: the server puts the
// catalog's `script` section as JSON in <body data-strings> (an attribute, so no inline script).
let pageStrings = null;
function pageString(key, fallback) {
  if (pageStrings === null) {
    pageStrings = {};
    try {
      pageStrings = JSON.parse(document.body.dataset.strings || "{}") || {};
    } catch (error) {
      pageStrings = {};
    }
  }
  return typeof pageStrings[key] === "string" ? pageStrings[key] : fallback;
}

document.addEventListener("DOMContentLoaded", () => {
  // Take keyboard and screen-reader users straight to a form's list of problems.
  const summary = document.querySelector(".error-summary");
  if (summary) summary.focus();

  // "Copy" buttons stay hidden unless the clipboard can be used.
  if (navigator.clipboard) {
    document.querySelectorAll("[data-copy]").forEach((button) => {
      button.hidden = false;
      button.addEventListener("click", async () => {
        const source = document.getElementById(button.dataset.copy);
        await navigator.clipboard.writeText(source.textContent.trim());
        button.textContent = pageString("copied", "Copied");
      });
    });
  }

  // Sign-in and setup tell the server the browser's time zone: a first sign-in keeps it for the user.
  document.querySelectorAll("input[data-browser-time-zone]").forEach((input) => {
    input.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  });

  const composer = document.querySelector("form[data-composer]");
  if (composer) setUpComposer(composer);
});

// ---- Campaign composer -------------------------------------------------------
// Without script the composer still works: its row buttons and "Show this layout's
// fields" are submit buttons the server answers by re-rendering the form (nothing is
// saved). With script, the same changes happen in the page.
//
// Field names are JSON paths (`data.0.key`, `triggers.1.filters.0.op`) and ids are
// derived from them ("field-" + the path, each character that is not a letter or digit
// replaced by "-", as FieldView.id(for:) does), so moving rows means renaming.

function setUpComposer(form) {
  form.querySelectorAll("[data-no-js-only]").forEach((element) => { element.hidden = true; });
  // Enter in a text field submits with the form's first submit button, which is the hidden
  // "Show this layout's fields": the page already shows them, so don't reload it.
  form.addEventListener("submit", (event) => {
    if (event.submitter && event.submitter.matches("[data-no-js-only]")) event.preventDefault();
  });

  // A polite live region announces what the row buttons did.
  const status = document.createElement("div");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  form.append(status);
  let statusTimer;
  const announce = (message) => {
    status.textContent = "";
    clearTimeout(statusTimer);
    // A fresh text node after a pause, so a repeated message is announced again.
    statusTimer = setTimeout(() => { status.textContent = message; }, 100);
  };

  // ---- Layout: show only the fields the chosen layout uses ----
  const imageLabel = form.querySelector('label[for="field-message-imageUrl"]');
  const showLayout = (layout) => {
    form.querySelectorAll("[data-layouts]").forEach((element) => {
      const layouts = element.dataset.layouts.split(/\s+/).filter(Boolean);
      if (layouts.length > 0) element.hidden = !layouts.includes(layout); // none listed: every layout
    });
    // Cards have a portrait and a landscape image; the other layouts have one image.
    if (imageLabel) imageLabel.textContent = layout === "card" ? "Portrait image URL" : "Image URL";
  };
  const chosenLayout = form.querySelector("[data-layout-choice]:checked");
  if (chosenLayout) showLayout(chosenLayout.value);
  form.addEventListener("change", (event) => {
    if (event.target.matches("[data-layout-choice]") && event.target.checked) showLayout(event.target.value);
  });

  // ---- Fields that belong to a radio option (a start date, the days between showings) ----
  // Typing a value chooses its option, so a date is never typed in vain. Choosing another option
  // afterwards is deliberate: the value stays on screen (to come back to) but is not sent, where the
  // server would otherwise say it was entered under the wrong option.
  form.addEventListener("input", (event) => {
    const radio = event.target.dataset && event.target.dataset.chooses && document.getElementById(event.target.dataset.chooses);
    if (radio && event.target.value !== "" && !radio.checked) {
      radio.checked = true;
      announce("Chose “" + (radio.labels[0] ? radio.labels[0].textContent : radio.value) + "”.");
    }
  });
  form.addEventListener("formdata", (event) => {
    form.querySelectorAll("[data-chooses]").forEach((input) => {
      const radio = document.getElementById(input.dataset.chooses);
      if (radio && !radio.checked) event.formData.delete(input.name);
    });
  });

  // ---- Colors: #RRGGBB or #AARRGGBB (alpha first), drawn in the swatch beside the input ----
  const paintSwatch = (input) => {
    const rect = input.parentElement && input.parentElement.querySelector(".swatch rect");
    if (!rect) return;
    const value = input.value.trim();
    let fill = "none";
    let opacity = "1";
    if (/^#([0-9a-f]{6}|[0-9a-f]{8})$/i.test(value)) {
      if (value.length === 9) {
        fill = "#" + value.slice(3);
        opacity = (parseInt(value.slice(1, 3), 16) / 255).toFixed(2);
      } else {
        fill = value;
      }
    }
    rect.setAttribute("fill", fill);
    rect.setAttribute("fill-opacity", opacity);
  };
  form.querySelectorAll("[data-color-input]").forEach(paintSwatch);
  form.addEventListener("input", (event) => {
    if (event.target.matches("[data-color-input]")) paintSwatch(event.target);
  });

  // ---- Repeated rows: add, remove and move up in the page ----
  const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const idFor = (path) => "field-" + path.replace(/[^\p{L}\p{N}]/gu, "-");
  const listFor = (path) => Array.from(form.querySelectorAll("[data-rows]")).find((list) => list.dataset.rows === path);
  const rowsOf = (list) => Array.from(list.children).filter((child) => child.hasAttribute("data-row"));
  const ownActions = (row) => Array.from(row.children).find((child) => child.classList.contains("row-actions"));
  const addButtonFor = (path) => Array.from(form.querySelectorAll("[data-row-add]")).find((button) => button.dataset.rowAdd === path);
  const nounOf = (list) => list.dataset.rowNoun || "Row";
  const firstControl = (row) => row.querySelector("input:not([type=hidden]), select, textarea");
  const focusFirstControl = (row) => {
    const control = firstControl(row);
    if (control) control.focus();
  };

  // Renames every path (names, button values, data-row*) and every id under `root` that
  // starts with `from` to start with `to` instead, e.g. triggers.2 → triggers.1 also renames
  // triggers.2.filters.0.value. Old → new ids are collected in `renamedIds`.
  const rebase = (root, from, to, renamedIds) => {
    if (from === to) return;
    const path = new RegExp("^" + escapeRegExp(from) + "(?=\\.|$)");
    const id = new RegExp("^" + escapeRegExp(idFor(from)) + "(?=-|$)");
    const newId = idFor(to);
    const renamePath = (value) => value.replace(path, to);
    const renameId = (value) => value.replace(id, newId);
    for (const element of [root, ...root.querySelectorAll("*")]) {
      if (element.hasAttribute("name") && element.name !== "intent") element.setAttribute("name", renamePath(element.getAttribute("name")));
      for (const attribute of ["data-row", "data-rows", "data-row-add"]) {
        if (element.hasAttribute(attribute)) element.setAttribute(attribute, renamePath(element.getAttribute(attribute)));
      }
      if (element.matches("button[name=intent]") && element.value.includes(":")) {
        const [operation, target] = element.value.split(/:(.*)/s);
        element.value = operation + ":" + renamePath(target);
      }
      if (element.id) {
        const renamed = renameId(element.id);
        if (renamed !== element.id) {
          renamedIds.set(element.id, renamed);
          element.id = renamed;
        }
      }
      if (element.hasAttribute("for")) element.setAttribute("for", renameId(element.getAttribute("for")));
      if (element.hasAttribute("aria-describedby")) {
        element.setAttribute("aria-describedby", element.getAttribute("aria-describedby").split(/\s+/).map(renameId).join(" "));
      }
    }
  };

  // The path of a row (`data.3`), read from the first field named under the list's prefix.
  const rowPath = (row, prefix) => {
    const pattern = new RegExp("^(" + escapeRegExp(prefix) + "\\.\\d+)(?=\\.|$)");
    for (const element of row.querySelectorAll("[name]")) {
      const match = pattern.exec(element.getAttribute("name"));
      if (match) return match[1];
    }
    return null;
  };

  const makeUpButton = (path) => {
    const button = document.createElement("button");
    button.className = "button button-small";
    button.type = "submit";
    button.name = "intent";
    button.value = "up:" + path;
    button.formNoValidate = true;
    button.setAttribute("data-row-up", "");
    button.textContent = "Move up";
    return button;
  };

  // Numbers the list's rows 0, 1, 2… in document order, nested lists included, and keeps
  // "Trigger N" legends, "Move up" buttons and the error summary's links in step.
  const renumber = (list) => {
    const prefix = list.dataset.rows;
    const renamedIds = new Map();
    rowsOf(list).forEach((row, index) => {
      const to = prefix + "." + index;
      const from = rowPath(row, prefix);
      if (from) rebase(row, from, to, renamedIds);
      const legend = Array.from(row.children).find((child) => child.tagName === "LEGEND");
      if (legend) legend.textContent = legend.textContent.replace(/\d+\s*$/, String(index + 1));
      if (list.hasAttribute("data-rows-movable")) {
        const actions = ownActions(row);
        const up = actions && Array.from(actions.children).find((child) => child.hasAttribute("data-row-up"));
        if (index === 0 && up) up.remove();
        if (index > 0 && actions && !up) actions.insertBefore(makeUpButton(to), actions.querySelector(":scope > [data-row-remove]"));
        if (index > 0 && up) up.value = "up:" + to;
      }
    });
    if (renamedIds.size > 0) {
      document.querySelectorAll('.error-summary a[href^="#"]').forEach((link) => {
        const renamed = renamedIds.get(decodeURIComponent(link.hash.slice(1)));
        if (renamed) link.hash = "#" + renamed;
      });
    }
  };

  // Empties a row: values, choices, errors and any nested rows (a new trigger has no filters).
  const blankRow = (row) => {
    row.querySelectorAll("[data-rows] [data-row]").forEach((nested) => nested.remove());
    row.querySelectorAll(".field-error").forEach((error) => error.remove());
    row.querySelectorAll(".field-invalid").forEach((field) => field.classList.remove("field-invalid"));
    row.querySelectorAll("input, select, textarea").forEach((control) => {
      if (control.type === "hidden") return;
      if (control.type === "checkbox" || control.type === "radio") {
        control.checked = control.defaultChecked = false;
      } else if (control.tagName === "SELECT") {
        Array.from(control.options).forEach((option, index) => { option.defaultSelected = index === 0; });
        control.selectedIndex = 0;
      } else {
        control.defaultValue = "";
        control.value = "";
      }
      control.removeAttribute("aria-invalid");
      const hint = control.id && row.querySelector("#" + CSS.escape(control.id + "-hint"));
      if (hint) control.setAttribute("aria-describedby", hint.id);
      else control.removeAttribute("aria-describedby");
      if (control.matches("[data-color-input]")) paintSwatch(control);
    });
  };

  // A blank property filter row, as campaigns/filter_row.mustache draws it, for lists
  // with no row to copy when the page has no other filter row either.
  const operators = [
    ["eq", "equals"], ["ne", "does not equal"], ["gt", "is greater than"], ["gte", "is at least"],
    ["lt", "is less than"], ["lte", "is at most"], ["contains", "contains"], ["exists", "exists"],
  ];
  const valueTypes = [["string", "Text"], ["number", "Number"], ["bool", "True/false"]];
  const buildFilterRow = (prefix) => {
    const path = prefix + ".0";
    const row = document.createElement("div");
    row.className = "row filter-row";
    row.setAttribute("data-row", prefix);
    const field = (name, label, makeControl) => {
      const wrapper = document.createElement("div");
      wrapper.className = "field";
      const labelElement = document.createElement("label");
      labelElement.htmlFor = idFor(path + "." + name);
      labelElement.textContent = label;
      const control = makeControl();
      control.id = idFor(path + "." + name);
      control.name = path + "." + name;
      wrapper.append(labelElement);
      if (control.tagName === "INPUT") {
        const inputRow = document.createElement("div");
        inputRow.className = "input-row";
        inputRow.append(control);
        wrapper.append(inputRow);
      } else {
        wrapper.append(control);
      }
      row.append(wrapper);
    };
    const textInput = (placeholder) => () => {
      const input = document.createElement("input");
      input.type = "text";
      input.dir = "auto";
      if (placeholder) input.placeholder = placeholder;
      return input;
    };
    const select = (options) => () => {
      const element = document.createElement("select");
      options.forEach(([value, label]) => element.add(new Option(label, value)));
      return element;
    };
    field("property", "Property", textInput("product_id"));
    field("op", "Comparison", select(operators));
    field("type", "Type", select(valueTypes));
    field("value", "Value", textInput(null));
    const actions = document.createElement("div");
    actions.className = "row-actions";
    const remove = document.createElement("button");
    remove.className = "button button-small";
    remove.type = "submit";
    remove.name = "intent";
    remove.value = "remove:" + path;
    remove.formNoValidate = true;
    remove.setAttribute("data-row-remove", "");
    remove.textContent = "Remove filter";
    actions.append(remove);
    row.append(actions);
    return row;
  };

  // A row to copy for `list`: its last row, else a row of the same kind elsewhere
  // (another trigger's filters), else a filter row built here. Null: let the server add it.
  const newRowFor = (list) => {
    const prefix = list.dataset.rows;
    const rows = rowsOf(list);
    if (rows.length > 0) return rows[rows.length - 1].cloneNode(true);
    if (!list.classList.contains("filters")) return null;
    const source = Array.from(form.querySelectorAll(".filters[data-rows]")).find((other) => rowsOf(other).length > 0);
    if (!source) return buildFilterRow(prefix);
    const copy = rowsOf(source)[0].cloneNode(true);
    const from = rowPath(copy, source.dataset.rows);
    if (from) rebase(copy, from, prefix + ".0", new Map());
    copy.setAttribute("data-row", prefix);
    return copy;
  };

  const addRow = (button) => {
    const list = listFor(button.dataset.rowAdd);
    if (!list) return false;
    const row = newRowFor(list);
    if (!row) return false;
    blankRow(row);
    list.append(row);
    renumber(list);
    focusFirstControl(row);
    announce(`${nounOf(list)} ${rowsOf(list).length} added.`);
    return true;
  };

  // The row a button belongs to, and the list holding it; null when the button is in no list.
  const rowOf = (button) => {
    const row = button.closest("[data-row]");
    const list = row && row.parentElement;
    return list && list.hasAttribute("data-rows") ? { row, list } : null;
  };

  const removeRow = (button) => {
    const found = rowOf(button);
    if (!found) return false;
    const { row, list } = found;
    const rows = rowsOf(list);
    const index = rows.indexOf(row);
    const noun = nounOf(list);
    if (rows.length <= Number(list.dataset.rowsMin || 0)) {
      // The list keeps one row: empty it rather than remove it.
      blankRow(row);
      renumber(list);
      focusFirstControl(row);
      announce(`${noun} ${index + 1} cleared.`);
      return true;
    }
    row.remove();
    renumber(list);
    const previous = rowsOf(list)[index - 1];
    const addButton = addButtonFor(list.dataset.rows);
    if (previous) focusFirstControl(previous);
    else if (addButton) addButton.focus();
    announce(`${noun} ${index + 1} removed.`);
    return true;
  };

  const moveRowUp = (button) => {
    const found = rowOf(button);
    if (!found) return false;
    const { row, list } = found;
    const rows = rowsOf(list);
    const index = rows.indexOf(row);
    if (index <= 0) return true;
    list.insertBefore(row, rows[index - 1]);
    renumber(list);
    const actions = ownActions(row);
    const up = actions && actions.querySelector(":scope > [data-row-up]");
    if (up) up.focus();
    else focusFirstControl(row);
    announce(`${nounOf(list)} moved up to position ${index}.`);
    return true;
  };

  form.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-row-add], button[data-row-remove], button[data-row-up]");
    if (!button || !form.contains(button)) return;
    let done = false;
    if (button.hasAttribute("data-row-add")) done = addRow(button);
    else if (button.hasAttribute("data-row-remove")) done = removeRow(button);
    else done = moveRowUp(button);
    if (done) event.preventDefault();
  });
}
